/**
 * What one appendEvents adds to the statistics counters (store/port/events.ts StatisticsPort),
 * computed in memory from the events being appended and, for bounces, the message's earlier
 * delivered/bounced events: the counting rule is domain/stat-counters.ts's, the delivered →
 * bounced move is the LMDB engine's (store/lmdb/stats.ts countEventInTxn), so both engines count
 * alike. The result is one row per counter record touched, summed, ready for one multi-row
 * upsert (stats-write.ts): a broadcast batch of 400 events touches a handful of records.
 */
import { counterOf, quarterOf, utcDay, zeroCounters, type StatCounters } from '../../domain/stat-counters.js';
import type { EventRecord, EventType, MailType } from '../../domain/types.js';
import { isPastQuarter, noteChange } from '../../domain/stat-changes.js';

/** An event as the counters see it: where it counts, and its (lower-cased) recipients. */
export interface CountedEvent {
  seq: number;
  accountId: string;
  channelId: string;
  messageId: string;
  mailType: MailType;
  eventType: EventType;
  tags: string[];
  /** Lower-cased. */
  recipients: string[];
  timeMs: number;
}

/** One counter record and what to add to it. */
export interface CounterRow extends StatCounters {
  account_id: string;
  grain: 'd' | 'q';
  /** '' for the untagged total. */
  tag: string;
  bucket: number;
  channel_id: string;
  mail_type: MailType;
  /** The event's sorted distinct tags ([] for the untagged total). */
  tag_set: string[];
}

/** A counter change of one event, before it is spread over its records. */
export interface CounterDelta {
  event: CountedEvent;
  name: keyof StatCounters;
  by: number;
}

export function countedOf(e: EventRecord, timeMs: number): CountedEvent {
  const recipients = [...new Set(e.recipients.map((r) => r.toLowerCase()))];
  return { seq: e.seq, accountId: e.accountId, channelId: e.channelId, messageId: e.messageId, mailType: e.mailType, eventType: e.eventType, tags: e.tags, recipients, timeMs };
}

/**
 * The counter changes of `appended` (in seq order). `earlier`: per message, its delivered and
 * bounced events already in the log (seq order). A bounce of a recipient counted delivered
 * moves it (delivered −1 in the delivery's buckets, bounced +1 in the bounce's); a recipient
 * already bounced is not counted again. Counting uses the distinct lower-cased recipients for
 * bounces (as LMDB) and the recipient count for the rest (domain/stat-counters.ts counterOf).
 */
export function counterDeltas(appended: readonly { record: EventRecord; counted: CountedEvent }[], earlier: Map<string, CountedEvent[]>): CounterDelta[] {
  const out: CounterDelta[] = [];
  for (const { record, counted } of appended) {
    const c = counterOf(record);
    if (c && record.eventType !== 'bounced') out.push({ event: counted, name: c.name, by: c.by });
    if (c && record.eventType === 'bounced') out.push(...bounceDeltas(counted, earlier.get(record.messageId) ?? []));
    if (record.eventType === 'delivered' || record.eventType === 'bounced') {
      const list = earlier.get(record.messageId) ?? [];
      list.push(counted);
      earlier.set(record.messageId, list);
    }
  }
  return out;
}

function bounceDeltas(e: CountedEvent, before: readonly CountedEvent[]): CounterDelta[] {
  const bouncedBefore = new Set<string>();
  const deliveredAt = new Map<string, CountedEvent>();
  for (const p of before) {
    if (p.eventType === 'bounced') for (const r of p.recipients) bouncedBefore.add(r);
    if (p.eventType === 'delivered') for (const r of p.recipients) if (!deliveredAt.has(r)) deliveredAt.set(r, p);
  }
  const out: CounterDelta[] = [];
  let fresh = 0;
  for (const r of e.recipients) {
    if (bouncedBefore.has(r)) continue;
    const delivered = deliveredAt.get(r);
    if (delivered) out.push({ event: delivered, name: 'delivered', by: -1 });
    fresh++;
  }
  if (fresh > 0) out.push({ event: e, name: 'bounced', by: fresh });
  return out;
}

/**
 * The counter records the deltas touch, summed per record: per UTC day and per quarter hour,
 * each once untagged and once under every distinct tag with the whole tag set.
 */
export function counterRows(deltas: readonly CounterDelta[]): CounterRow[] {
  const rows = new Map<string, CounterRow>();
  const add = (e: CountedEvent, grain: 'd' | 'q', tag: string, tagSet: string[], name: keyof StatCounters, by: number) => {
    const bucket = grain === 'd' ? utcDay(e.timeMs) : quarterOf(e.timeMs);
    const key = JSON.stringify([e.accountId, grain, tag, bucket, e.channelId, e.mailType, tagSet]);
    let row = rows.get(key);
    if (!row) rows.set(key, (row = { account_id: e.accountId, grain, tag, bucket, channel_id: e.channelId, mail_type: e.mailType, tag_set: tagSet, ...zeroCounters() }));
    row[name] += by;
  };
  for (const { event: e, name, by } of deltas) {
    const tags = [...new Set(e.tags)].sort();
    for (const grain of ['d', 'q'] as const) {
      add(e, grain, '', [], name, by);
      for (const tag of tags) add(e, grain, tag, tags, name, by);
    }
  }
  // A fixed order: concurrent upserts of the same records never wait on each other in a cycle.
  return [...rows.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, row]) => row);
}

/**
 * The accounts whose deltas add to a quarter hour that ended before `nowMs`, each with the
 * earliest such quarter: their change marks move on in the same transaction (stats-changes.ts).
 */
export function pastQuarterChanges(deltas: readonly CounterDelta[], nowMs: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const { event: e } of deltas) {
    const quarter = quarterOf(e.timeMs);
    if (isPastQuarter(quarter, nowMs)) noteChange(out, e.accountId, quarter);
  }
  return out;
}
