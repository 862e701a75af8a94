/**
 * Statistics counters (spec 2.9, 4.15), pre-aggregated per account, UTC day, channel and mail
 * type when an event is appended (countEventInTxn runs inside appendEventInTxn), so a totals
 * query reads (days × channels × mail types) records whatever the number of events.
 *
 * What is counted: every counter is a number of recipients.
 *   sent         recipients of `processed` events (built, signed and handed to delivery;
 *                suppressed recipients are not in it)
 *   delivered, bounced, opened, clicked, complained, unsubscribed
 *                recipients of events of that type (every open and click counts, not unique ones)
 * `accepted` and `resubscribed` events are not counted. Counters survive event retention.
 *
 * Tags: besides the per-day total (statsDaily), an event is counted under each of its tags
 * together with its whole tag set (statsDailyTags: [accountId, tag, day, channelId, mailType,
 * tagSet]). A query for tags A,B walks A's records, then B's records skipping those whose set
 * also holds A, so an event carrying both counts once. Its cost is days × channels × the
 * distinct tag sets that contain a wanted tag (tags used like ids, unique per message, make
 * that grow with the number of messages).
 */
import type { EventRecord, EventType, MailType } from '../domain/types.js';
import type { Store } from './env.js';
import { KEY_MAX } from './layout.js';

export const DAY_MS = 86_400_000;

export interface StatCounters {
  sent: number;
  delivered: number;
  opened: number;
  clicked: number;
  bounced: number;
  unsubscribed: number;
  complained: number;
}

export type StatTotals = Record<MailType, StatCounters>;

const COUNTER_OF: Partial<Record<EventType, keyof StatCounters>> = {
  processed: 'sent',
  delivered: 'delivered',
  bounced: 'bounced',
  opened: 'opened',
  clicked: 'clicked',
  complained: 'complained',
  unsubscribed: 'unsubscribed',
};

export function zeroCounters(): StatCounters {
  return { sent: 0, delivered: 0, opened: 0, clicked: 0, bounced: 0, unsubscribed: 0, complained: 0 };
}

/** The counter an event adds to, and by how much (0: not counted). */
export function counterOf(e: Pick<EventRecord, 'eventType' | 'recipients'>): { name: keyof StatCounters; by: number } | null {
  const name = COUNTER_OF[e.eventType];
  return name && e.recipients.length > 0 ? { name, by: e.recipients.length } : null;
}

export function utcDay(ms: number): number {
  return Math.floor(ms / DAY_MS);
}

/** The key element naming a set of tags: JSON of the sorted, distinct tags. */
export function tagSetKey(tags: string[]): string {
  return JSON.stringify([...new Set(tags)].sort());
}

/** Inside a write, with the event being appended. */
export function countEventInTxn(store: Store, e: EventRecord, timeMs: number): void {
  const c = counterOf(e);
  if (!c) return;
  const day = utcDay(timeMs);
  bump(store, 'statsDaily', [e.accountId, day, e.channelId, e.mailType], c.name, c.by);
  if (e.tags.length === 0) return;
  const set = tagSetKey(e.tags);
  for (const tag of new Set(e.tags)) bump(store, 'statsDailyTags', [e.accountId, tag, day, e.channelId, e.mailType, set], c.name, c.by);
}

function bump(store: Store, db: 'statsDaily' | 'statsDailyTags', key: unknown[], name: keyof StatCounters, by: number): void {
  const cur = (store.db[db].get(key) as StatCounters | undefined) ?? zeroCounters();
  store.db[db].put(key, { ...cur, [name]: cur[name] + by });
}

export interface TotalsQuery {
  accountId: string;
  /** Only these channels; undefined: every channel of the account. */
  channelIds?: string[];
  /** Inclusive range of UTC days (utcDay()). */
  fromDay: number;
  toDay: number;
  /** Only events carrying at least one of these tags. */
  tags?: string[];
}

/** Reads the day records in [fromDay, toDay]: cost grows with days × active channels (× tag sets). */
export function statisticsTotals(store: Store, q: TotalsQuery): StatTotals {
  const out: StatTotals = { transactional: zeroCounters(), broadcast: zeroCounters() };
  const channels = q.channelIds ? new Set(q.channelIds) : null;
  const add = (channelId: string, mailType: MailType, value: StatCounters): void => {
    if (channels && !channels.has(channelId)) return;
    const sum = out[mailType];
    if (!sum) return;
    for (const name of Object.keys(sum) as (keyof StatCounters)[]) sum[name] += value[name] ?? 0;
  };
  if (!q.tags || q.tags.length === 0) {
    const range = { start: [q.accountId, q.fromDay], end: [q.accountId, q.toDay, KEY_MAX] };
    for (const { key, value } of store.db.statsDaily.getRange(range)) {
      const [, , channelId, mailType] = key as [string, number, string, MailType];
      add(channelId, mailType, value as StatCounters);
    }
    return out;
  }
  const tags = [...new Set(q.tags)];
  // Sets holding an earlier tag of the list were counted under that tag already.
  const countedBefore = new Map<string, boolean>();
  tags.forEach((tag, i) => {
    const earlier = new Set(tags.slice(0, i));
    countedBefore.clear();
    const range = { start: [q.accountId, tag, q.fromDay], end: [q.accountId, tag, q.toDay, KEY_MAX] };
    for (const { key, value } of store.db.statsDailyTags.getRange(range)) {
      const [, , , channelId, mailType, set] = key as [string, string, number, string, MailType, string];
      let skip = countedBefore.get(set);
      if (skip === undefined) countedBefore.set(set, (skip = i > 0 && (JSON.parse(set) as string[]).some((t) => earlier.has(t))));
      if (!skip) add(channelId, mailType, value as StatCounters);
    }
  });
  return out;
}
