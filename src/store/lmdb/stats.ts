/**
 * Statistics counters (spec 2.9, 4.15), pre-aggregated per account, UTC day, channel and mail
 * type when an event is appended (countEventInTxn runs inside appendEventInTxn), so a totals
 * query reads (days × channels × mail types) records whatever the number of events.
 *
 * What is counted: every counter is a number of recipients.
 *   sent         recipients of `processed` events (built, signed and handed to delivery;
 *                suppressed recipients are not in it)
 *   delivered, bounced
 *                recipients with that final outcome; one recipient counts in one of them only (a
 *                bounce after a delivery moves it, see countEventInTxn)
 *   opened, clicked, complained, unsubscribed
 *                recipients of events of that type (every open and click counts, not unique ones)
 * `accepted` and `resubscribed` events are not counted. Counters survive event retention.
 *
 * Tags: besides the per-day total (statsDaily), an event is counted under each of its tags
 * together with its whole tag set (statsDailyTags: [accountId, tag, day, channelId, mailType,
 * tagSet]). A query for tags A,B walks A's records, then B's records skipping those whose set
 * also holds A, so an event carrying both counts once. Its cost is days × channels × the
 * distinct tag sets that contain a wanted tag (tags used like ids, unique per message, make
 * that grow with the number of messages).
 *
 * Series (GET /statistics/daily, /statistics/hourly): the same counters per UTC quarter hour
 * (statsQuarter, statsQuarterTags). Every IANA zone's offset today is a whole number of quarter
 * hours (Asia/Kolkata +5:30, Asia/Kathmandu +5:45), so a day of any zone, 23, 24 or 25 hours
 * long, is an exact run of quarter hours and a series never reads events; a daily series reads
 * the day records and only the quarter hours near each midnight (statisticsDaySeries). Counters
 * written before the quarter-hour databases existed have no quarter hours: a daily series places
 * them on UTC days, an hourly one not at all.
 */
import type { EventRecord, MailType } from '../../domain/types.js';
import { counterOf, DAY_MS, QUARTER_MS, quarterOf, utcDay, zeroCounters, type StatCounters, type StatTotals } from '../../domain/stat-counters.js';
import type { CounterScope, SeriesQuery, TotalsQuery } from '../port/events.js';
import { dbsOf } from './databases.js';
import { hiddenChannels } from './purge-queue.js';
import type { Store } from './env.js';
import { KEY_MAX } from './layout.js';
import { rollupInTxn } from './stats-rollup.js';
import { noteStatChangeInTxn } from './stats-changes.js';
import { isPastQuarter, noteChange } from '../../domain/stat-changes.js';

// The counting rule and the query shapes live in domain/ and the port; re-exported for the engine's files.
export { counterOf, DAY_MS, utcDay, zeroCounters, type SeriesQuery, type StatCounters, type StatTotals, type TotalsQuery };

/** The key element naming a set of tags: JSON of the sorted, distinct tags. */
export function tagSetKey(tags: string[]): string {
  return JSON.stringify([...new Set(tags)].sort());
}

/**
 * Inside a write, with the event being appended (already in messageEvents).
 *
 * Counting rule for outcomes: `delivered` and `bounced` are final outcomes of one recipient, and
 * a recipient counts in at most one of them. A bounce that arrives after the recipient was
 * counted delivered (an asynchronous DSN) moves it: `delivered` goes down by one in the buckets
 * where the delivery was counted, `bounced` goes up in the bounce's buckets. A second bounce of
 * an already bounced recipient is not counted. So delivered + bounced ≤ sent over any range
 * that holds the whole life of the messages. Only the message's own events are read.
 */
export function countEventInTxn(store: Store, e: EventRecord, timeMs: number): void {
  const c = counterOf(e);
  if (!c) return;
  if (e.eventType !== 'bounced') return addInTxn(store, e, timeMs, c.name, c.by);
  const bouncedBefore = new Set<string>();
  const deliveredAt = new Map<string, { event: EventRecord; timeMs: number }>();
  for (const { key, value } of dbsOf(store).messageEvents.getRange({ start: [e.messageId], end: [e.messageId, e.seq] })) {
    const earlier = dbsOf(store).events.get((key as [string, number])[1]) as EventRecord | undefined;
    if (earlier?.eventType === 'bounced') for (const r of earlier.recipients) bouncedBefore.add(r.toLowerCase());
    if (earlier?.eventType === 'delivered') for (const r of earlier.recipients) if (!deliveredAt.has(r.toLowerCase())) deliveredAt.set(r.toLowerCase(), { event: earlier, timeMs: value as number });
  }
  let fresh = 0;
  for (const r of new Set(e.recipients.map((x) => x.toLowerCase()))) {
    if (bouncedBefore.has(r)) continue;
    const delivered = deliveredAt.get(r);
    if (delivered) addInTxn(store, delivered.event, delivered.timeMs, 'delivered', -1);
    fresh++;
  }
  if (fresh > 0) addInTxn(store, e, timeMs, 'bounced', fresh);
}

/** Adds `by` to one counter in every aggregate: per day and per quarter hour, each with its tags. */
function addInTxn(store: Store, e: EventRecord, timeMs: number, name: keyof StatCounters, by: number): void {
  const day = utcDay(timeMs);
  const quarter = quarterOf(timeMs);
  bump(store, 'statsDaily', [e.accountId, day, e.channelId, e.mailType], name, by);
  bump(store, 'statsQuarter', [e.accountId, quarter, e.channelId, e.mailType], name, by);
  // A quarter hour that has ended may be held as closed by a reader (statistics/series-cache.ts).
  if (isPastQuarter(quarter, Date.now())) pendingCounts(store).noteChange(e.accountId, quarter);
  rollupInTxn(store, e, timeMs, name, by);
  countForBroadcastInTxn(store, e, name, by);
  if (e.tags.length === 0) return;
  const set = tagSetKey(e.tags);
  for (const tag of new Set(e.tags)) {
    bump(store, 'statsDailyTags', [e.accountId, tag, day, e.channelId, e.mailType, set], name, by);
    bump(store, 'statsQuarterTags', [e.accountId, tag, quarter, e.channelId, e.mailType, set], name, by);
  }
}

/**
 * Per-broadcast statistics (GET /broadcasts/{id}): the same counters under the same rules, for
 * the events of messages a broadcast made, attributed through the message record's broadcastId.
 * The attribution waits for the write's end, where the messages the expander
 * made in it are known without reading (and decoding) their records: noteBroadcastMessagesInTxn.
 */
function countForBroadcastInTxn(store: Store, e: EventRecord, name: keyof StatCounters, by: number): void {
  if (e.mailType !== 'broadcast') return;
  const pending = pendingCounts(store);
  const add = pending.ofMessages.get(e.messageId) ?? {};
  pending.ofMessages.set(e.messageId, { ...add, [name]: (add[name] ?? 0) + by });
}

function broadcastOfMessage(store: Store, messageId: string): string | undefined {
  return (dbsOf(store).messages.get(messageId) as { broadcastId?: string } | undefined)?.broadcastId;
}

/** Inside the write that commits a broadcast's messages: they are the broadcast's (no record read at its end). */
export function noteBroadcastMessagesInTxn(store: Store, broadcastId: string, messageIds: readonly string[]): void {
  const pending = pendingCounts(store);
  for (const id of messageIds) pending.broadcastOf.set(id, broadcastId);
}

type CounterDb = 'statsDaily' | 'statsDailyTags' | 'statsQuarter' | 'statsQuarterTags' | 'broadcastStatistics';

/** What one write adds to one counter record. */
interface PendingCounter {
  db: CounterDb;
  key: unknown[];
  add: Partial<StatCounters>;
}

/**
 * What one write adds to the counters, written once per group commit (write-scope.ts): a
 * broadcast batch of 100 messages, or the twenty sends of one commit, which all count into the
 * same day, quarter hour, broadcast and tag records, reads and writes 5 records instead of 500.
 */
class PendingCounts {
  readonly records = new Map<string, PendingCounter>();
  /** Counts of broadcast messages, added to their broadcast's record at the end. */
  readonly ofMessages = new Map<string, Partial<StatCounters>>();
  /** The broadcast of messages committed in this write, as the expander knows it. */
  readonly broadcastOf = new Map<string, string>();
  /** Accounts whose counters of ended quarter hours change, with the earliest such quarter (stats-changes.ts). */
  readonly changed = new Map<string, number>();

  noteChange(accountId: string, quarter: number): void {
    noteChange(this.changed, accountId, quarter);
  }

  add(db: CounterDb, key: unknown[], name: keyof StatCounters, by: number): void {
    const id = `${db}\u0000${JSON.stringify(key)}`;
    let p = this.records.get(id);
    if (!p) this.records.set(id, (p = { db, key, add: {} }));
    p.add[name] = (p.add[name] ?? 0) + by;
  }

  /** A finished write's counts, added to its group commit's (write-scope.ts merge). */
  merge(from: PendingCounts): void {
    for (const [id, p] of from.records) {
      const mine = this.records.get(id);
      if (!mine) this.records.set(id, p);
      else for (const name of Object.keys(p.add) as (keyof StatCounters)[]) mine.add[name] = (mine.add[name] ?? 0) + p.add[name]!;
    }
    for (const [messageId, add] of from.ofMessages) {
      const mine = this.ofMessages.get(messageId) ?? {};
      for (const name of Object.keys(add) as (keyof StatCounters)[]) mine[name] = (mine[name] ?? 0) + add[name]!;
      this.ofMessages.set(messageId, mine);
    }
    for (const [messageId, broadcastId] of from.broadcastOf) this.broadcastOf.set(messageId, broadcastId);
    for (const [accountId, quarter] of from.changed) this.noteChange(accountId, quarter);
  }

  flush(store: Store): void {
    for (const [messageId, add] of this.ofMessages) {
      const broadcastId = this.broadcastOf.get(messageId) ?? broadcastOfMessage(store, messageId);
      if (!broadcastId) continue;
      for (const name of Object.keys(add) as (keyof StatCounters)[]) this.add('broadcastStatistics', [broadcastId], name, add[name]!);
    }
    for (const p of this.records.values()) addToRecord(store, p);
    for (const [accountId, quarter] of this.changed) noteStatChangeInTxn(store, accountId, quarter);
  }
}

/** This write's pending counts, written once at its end. */
function pendingCounts(store: Store): PendingCounts {
  return store.requireWriteScope().part<PendingCounts>('statistics', { init: () => new PendingCounts(), flush: (p) => p.flush(store), merge: (into, from) => into.merge(from) });
}

function bump(store: Store, db: CounterDb, key: unknown[], name: keyof StatCounters, by: number): void {
  pendingCounts(store).add(db, key, name, by);
}

function addToRecord(store: Store, p: PendingCounter): void {
  const cur = (dbsOf(store)[p.db].get(p.key) as StatCounters | undefined) ?? zeroCounters();
  const next = { ...cur };
  for (const name of Object.keys(p.add) as (keyof StatCounters)[]) next[name] = cur[name] + p.add[name]!;
  dbsOf(store)[p.db].put(p.key, next);
}

/**
 * Calls visit for every counter record of buckets [from, to] (inclusive) in bucket order, per
 * tag when tags are given. A tag filter walks each tag's records, skipping those whose tag set
 * holds an earlier tag of the list, so an event carrying several wanted tags counts once.
 */
function walkCounters(
  store: Store,
  dbs: { plain: 'statsDaily' | 'statsQuarter'; tagged: 'statsDailyTags' | 'statsQuarterTags' },
  q: CounterScope & { from: number; to: number },
  visit: (bucket: number, mailType: MailType, value: StatCounters) => void,
): void {
  const channels = q.channelIds ? new Set(q.channelIds) : null;
  // Deleted channels whose counters the purger has not removed yet count no more (spec 4.5).
  const hidden = hiddenChannels(store, q.accountId);
  if (!q.tags || q.tags.length === 0) {
    for (const { key, value } of dbsOf(store)[dbs.plain].getRange({ start: [q.accountId, q.from], end: [q.accountId, q.to, KEY_MAX] })) {
      const [, bucket, channelId, mailType] = key as [string, number, string, MailType];
      if ((!channels || channels.has(channelId)) && !hidden.has(channelId)) visit(bucket, mailType, value as StatCounters);
    }
    return;
  }
  const tags = [...new Set(q.tags)];
  tags.forEach((tag, i) => {
    const earlier = new Set(tags.slice(0, i));
    const countedBefore = new Map<string, boolean>();
    const range = { start: [q.accountId, tag, q.from], end: [q.accountId, tag, q.to, KEY_MAX] };
    for (const { key, value } of dbsOf(store)[dbs.tagged].getRange(range)) {
      const [, , bucket, channelId, mailType, set] = key as [string, string, number, string, MailType, string];
      if ((channels && !channels.has(channelId)) || hidden.has(channelId)) continue;
      let skip = countedBefore.get(set);
      if (skip === undefined) countedBefore.set(set, (skip = i > 0 && (JSON.parse(set) as string[]).some((t) => earlier.has(t))));
      if (!skip) visit(bucket, mailType, value as StatCounters);
    }
  });
}

function addTo(out: StatTotals, mailType: MailType, value: StatCounters, sign = 1): void {
  const sum = out[mailType];
  if (!sum) return;
  for (const name of Object.keys(sum) as (keyof StatCounters)[]) sum[name] += sign * (value[name] ?? 0);
}

/** Reads the day records in [fromDay, toDay]: cost grows with days × active channels (× tag sets). */
export function statisticsTotals(store: Store, q: TotalsQuery): StatTotals {
  const out: StatTotals = { transactional: zeroCounters(), broadcast: zeroCounters() };
  walkCounters(store, { plain: 'statsDaily', tagged: 'statsDailyTags' }, { ...q, from: q.fromDay, to: q.toDay }, (_b, mailType, value) => addTo(out, mailType, value));
  return out;
}

/**
 * One StatTotals per bucket (zeros included), from the quarter-hour records alone: cost grows with
 * quarter hours × active channels (× tag sets), never with the number of events.
 */
export function statisticsSeries(store: Store, q: SeriesQuery): StatTotals[] {
  const edges = q.edgesMs.map(quarterOf);
  const out: StatTotals[] = edges.slice(1).map(() => ({ transactional: zeroCounters(), broadcast: zeroCounters() }));
  if (out.length === 0) return out;
  // Records come in bucket order within one walk (per tag); the cursor restarts with each tag.
  let i = 0;
  let lastBucket = -Infinity;
  walkCounters(store, { plain: 'statsQuarter', tagged: 'statsQuarterTags' }, { ...q, from: edges[0], to: edges[edges.length - 1] - 1 }, (bucket, mailType, value) => {
    if (bucket < lastBucket) i = 0;
    lastBucket = bucket;
    while (i < out.length - 1 && bucket >= edges[i + 1]) i++;
    addTo(out[i], mailType, value);
  });
  return out;
}

const QUARTERS_PER_DAY = DAY_MS / QUARTER_MS;

/**
 * A series of zone days, read mostly from the UTC day records: each edge is moved to its nearest
 * UTC midnight, and the quarter hours between the edge and that midnight (at most 12 hours) are
 * added or taken away. For bucket i, with W(e) = sum over [edge, midnight) (negative when the
 * midnight comes first): sum[eᵢ, eᵢ₊₁) = W(eᵢ) + days[midnightᵢ, midnightᵢ₊₁) − W(eᵢ₊₁). A year
 * in Europe/Berlin reads 366 day records and 4 to 8 quarter hours per day, not 96. Buckets must
 * be at least a day long (daily series); shorter ones go to statisticsSeries.
 */
export function statisticsDaySeries(store: Store, q: SeriesQuery): StatTotals[] {
  const edges = q.edgesMs.map(quarterOf);
  const midnights = edges.map((e) => Math.round(e / QUARTERS_PER_DAY));
  const out: StatTotals[] = edges.slice(1).map(() => ({ transactional: zeroCounters(), broadcast: zeroCounters() }));
  if (out.length === 0) return out;
  const quarterDbs = { plain: 'statsQuarter', tagged: 'statsQuarterTags' } as const;
  edges.forEach((edge, i) => {
    const midnight = midnights[i] * QUARTERS_PER_DAY;
    if (edge === midnight) return;
    const [from, to, sign] = edge < midnight ? [edge, midnight - 1, 1] : [midnight, edge - 1, -1];
    walkCounters(store, quarterDbs, { ...q, from, to }, (_b, mailType, value) => {
      if (i < out.length) addTo(out[i], mailType, value, sign);
      if (i > 0) addTo(out[i - 1], mailType, value, -sign);
    });
  });
  let i = 0;
  let lastDay = -Infinity;
  const first = midnights[0];
  const last = midnights[midnights.length - 1];
  if (last <= first) return out;
  walkCounters(store, { plain: 'statsDaily', tagged: 'statsDailyTags' }, { ...q, from: first, to: last - 1 }, (day, mailType, value) => {
    if (day < lastDay) i = 0;
    lastDay = day;
    while (i < out.length - 1 && day >= midnights[i + 1]) i++;
    addTo(out[i], mailType, value);
  });
  return out;
}
