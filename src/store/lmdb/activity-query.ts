/**
 * Filtered, seq-ordered queries over the event log (GET /activity/events).
 *
 * Plan: every indexed filter is one stream of seqs in ascending order (an eventIndex prefix, or
 * messageEvents for a message); a comma list (tags, eventTypes) is the union of its streams.
 * Several filters are intersected by leapfrogging: each stream seeks to the largest seq any
 * other stream is at, so a walk skips what cannot match instead of reading it. startDate and
 * endDate become a seq range through the event clock (events.ts) and are then checked exactly
 * on each index entry's value (the event's timestampMs). Only `subject` needs the event itself.
 * A page stops after `limit` matches: its cost is about (entries the streams skip over + limit
 * event reads), never the whole log. A newest-first page (`order: 'desc'`) is the same walk with
 * every stream read backwards: each seeks to the smallest seq any other is at.
 *
 * Late events: the clock is the running maximum of timestamps. An event stamped earlier than
 * the newest event already appended (a delivery outcome stamped when its attempt began, a
 * clock step) is still found by endDate when it is at most LATE_EVENT_TOLERANCE_MS late; one
 * later than that can be missed by an endDate filter (and counted by a startDate count). It is
 * always listed by queries without time filters.
 *
 * Budgets keep one request from holding the event loop: a page reads at most PAGE_BUDGET cost
 * units (then returns what it has, `partial`, with `after` where it stopped), and totalCount
 * walks at most COUNT_BUDGET units (then extrapolates, `totalCountExact: false`).
 */
import type { EventRecord } from '../../domain/types.js';
import type { ActivityFilter, ActivityPage, PageOptions as PortPageOptions } from '../port/events.js';
import { dbsOf } from './databases.js';
import type { Store } from './env.js';
import { indexPrefix, type IndexKind } from './event-index.js';
import { channelDeletions, hiddenChannels } from './purge-queue.js';
import { eventFloor, firstSeqAtClock, getEvent, lastEventSeq } from './events.js';

export const LATE_EVENT_TOLERANCE_MS = 5 * 60_000;
/**
 * Cost units, calibrated on bench/activity.mjs: 1 per index entry read, 12 per seek, 10 per
 * event read; about 0.5 µs per unit. A page stops at ~100 ms of work, a count at ~200 ms.
 */
const UNIT_SEEK = 12;
const UNIT_EVENT = 10;
export const PAGE_BUDGET = 200_000;
export const COUNT_BUDGET = 400_000;
const STEPS_BEFORE_RESEEK = 8;

// The filter and page shapes are the port's (store/port/events.ts); re-exported for the engine's files.
export type { ActivityFilter, ActivityPage };

interface Hit {
  seq: number;
  ts: number;
}

class Meter {
  units = 0;
}

interface Stream {
  /**
   * The first entry reached walking from `from` in the walk's direction (seq ≥ from forwards,
   * seq ≤ from backwards), or null when there is none inside the range.
   */
  seek(from: number): Hit | null;
  close(): void;
}

/** The seq range a stream reads, [lo, end), and its direction. */
interface Walk {
  lo: number;
  end: number;
  desc: boolean;
}

/** Whether `seq` is at or beyond `from` in the walk's direction. */
function reached(desc: boolean, seq: number, from: number): boolean {
  return desc ? seq <= from : seq >= from;
}

/** One index prefix, read forwards (or backwards); short jumps step, long jumps seek. */
class IndexStream implements Stream {
  private it: Iterator<{ key: unknown; value: unknown }> | null = null; // or bare keys, see step()
  private cur: Hit | null = null;
  private exhausted = false;

  constructor(
    private readonly store: Store,
    readonly db: 'eventIndex' | 'messageEvents' | 'messageQueue',
    readonly prefix: (string | number)[],
    private readonly walk: Walk,
    private readonly meter: Meter,
    /** Read the timestamps (values) too; without time filters keys alone are cheaper. */
    private readonly withTimes: boolean,
  ) {}

  seek(from: number): Hit | null {
    const { lo, end, desc } = this.walk;
    if (this.cur && reached(desc, this.cur.seq, from)) return this.cur;
    if (this.exhausted) return null;
    if (this.it) {
      for (let i = 0; i < STEPS_BEFORE_RESEEK; i++) {
        const h = this.step();
        if (!h || reached(desc, h.seq, from)) return h;
      }
      this.it.return?.();
    }
    this.meter.units += UNIT_SEEK;
    // lmdb-js ranges: start inclusive, end exclusive, in either direction.
    const bounds = desc ? { start: [...this.prefix, from], end: [...this.prefix, lo - 1], reverse: true } : { start: [...this.prefix, from], end: [...this.prefix, end] };
    const range = { ...bounds, values: this.withTimes };
    this.it = dbsOf(this.store)[this.db].getRange(range)[Symbol.iterator]() as Iterator<{ key: unknown; value: unknown }>;
    return this.step();
  }

  private step(): Hit | null {
    this.meter.units++;
    const r = this.it!.next();
    if (r.done) {
      this.exhausted = true;
      this.cur = null;
      this.it = null;
      return null;
    }
    // Without values, lmdb-js yields the bare key.
    const key = (this.withTimes ? r.value.key : r.value) as unknown[];
    this.cur = { seq: key[key.length - 1] as number, ts: this.withTimes ? (r.value.value as number) : 0 };
    return this.cur;
  }

  close(): void {
    this.it?.return?.();
    this.it = null;
  }
}

/** Any of several streams (a comma list); equal seqs merge, so each event comes once. */
class UnionStream implements Stream {
  constructor(
    readonly parts: IndexStream[],
    private readonly desc: boolean,
  ) {}

  seek(from: number): Hit | null {
    let best: Hit | null = null;
    for (const p of this.parts) {
      const h = p.seek(from);
      if (h && (!best || (this.desc ? h.seq > best.seq : h.seq < best.seq))) best = h;
    }
    return best;
  }

  close(): void {
    for (const p of this.parts) p.close();
  }
}

/** The first seq from `from` on (≥ forwards, ≤ backwards) present in every stream (leapfrog intersection). */
function nextMatch(streams: Stream[], from: number): Hit | null {
  let target = from;
  for (;;) {
    let agreed = true;
    let hit: Hit | null = null;
    for (const s of streams) {
      hit = s.seek(target);
      if (!hit) return null;
      if (hit.seq !== target) {
        target = hit.seq;
        agreed = false;
      }
    }
    if (agreed) return hit;
  }
}

interface Plan {
  streams: Stream[];
  /** Seq range [lo, hi) that can hold matches. */
  lo: number;
  hi: number;
  timeOk: (ts: number) => boolean;
  close(): void;
}

/** The streams for a filter, most selective kinds first (the leapfrog works in any order). */
function plan(store: Store, f: ActivityFilter, meter: Meter, desc = false): Plan {
  const last = lastEventSeq(store);
  const lo = Math.max(eventFloor(store), f.startMs === undefined ? 1 : firstSeqAtClock(store, f.startMs));
  const hi = Math.min(last + 1, f.endMs === undefined ? Infinity : firstSeqAtClock(store, f.endMs + LATE_EVENT_TOLERANCE_MS + 1));
  const walk: Walk = { lo, end: Math.max(lo, hi), desc };
  const { startMs, endMs } = f;
  const timed = startMs !== undefined || endMs !== undefined;
  const idx = (kind: IndexKind, value: string) => new IndexStream(store, 'eventIndex', indexPrefix(f.accountId, kind, value), walk, meter, timed);
  const any = (kind: IndexKind, values: readonly string[]) =>
    values.length === 1 ? idx(kind, values[0]) : new UnionStream([...new Set(values)].map((v) => idx(kind, v)), desc);

  const streams: Stream[] = [];
  if (f.messageId) {
    // messageEvents is not keyed by account: the account's stream keeps another account's
    // message out (callers check first; a message has few events, so this costs a few seeks).
    streams.push(new IndexStream(store, 'messageEvents', [f.messageId], walk, meter, timed));
    streams.push(idx('a', ''));
  }
  // Queued messages are few next to all accepted events: this stream leads and replaces 'e'.
  if (f.messageStatus === 'queued') streams.push(new IndexStream(store, 'messageQueue', [f.accountId], walk, meter, timed));
  if (f.recipient) streams.push(idx('r', f.recipient.toLowerCase()));
  if (f.tags?.length) streams.push(any('t', f.tags));
  if (f.eventTypes?.length && f.messageStatus !== 'queued') streams.push(any('e', f.eventTypes));
  if (f.channelId) streams.push(idx('c', f.channelId));
  if (f.mailType) streams.push(idx('m', f.mailType));
  if (streams.length === 0) streams.push(idx('a', ''));
  return {
    streams,
    lo,
    hi,
    timeOk: (ts) => (startMs === undefined || ts >= startMs) && (endMs === undefined || ts <= endMs),
    close: () => streams.forEach((s) => s.close()),
  };
}

/** The one filter the indexes cannot answer. */
function subjectOk(f: ActivityFilter, e: EventRecord): boolean {
  return !f.subject || e.subject.toLowerCase().includes(f.subject.toLowerCase());
}

/** status=sent: the accepted event's message is not in the queue (one key lookup). */
function statusOk(store: Store, f: ActivityFilter, seq: number): boolean {
  return f.messageStatus !== 'sent' || !dbsOf(store).messageQueue.doesExist([f.accountId, seq]);
}

/** A page's place and size (the port's), and the engine's budget for it in cost units (PAGE_BUDGET by default). */
export interface PageOptions extends PortPageOptions {
  budget?: number;
}

/**
 * One page: matches past afterSeq in the page's order, at most `limit`. Synchronous on purpose:
 * all reads see one snapshot, which holds a contiguous run of seqs.
 */
export function findEvents(store: Store, f: ActivityFilter, opts: PageOptions): Omit<ActivityPage, 'totalCount' | 'totalCountExact'> {
  const budget = opts.budget ?? PAGE_BUDGET;
  const desc = opts.order === 'desc';
  const meter = new Meter();
  const p = plan(store, f, meter, desc);
  // Deleted channels whose events are still being purged: skipped from the delete on.
  const hidden = hiddenChannels(store, f.accountId);
  const results: EventRecord[] = [];
  const inRange = (seq: number) => seq >= p.lo && seq < p.hi;
  let pos = desc ? (opts.afterSeq > 0 ? Math.min(p.hi, opts.afterSeq) : p.hi) - 1 : Math.max(p.lo, opts.afterSeq + 1);
  let partial = false;
  try {
    while (results.length < opts.limit) {
      if (meter.units > budget) {
        partial = true;
        break;
      }
      const hit = inRange(pos) ? nextMatch(p.streams, pos) : null;
      if (!hit || !inRange(hit.seq)) break;
      pos = desc ? hit.seq - 1 : hit.seq + 1;
      if (!p.timeOk(hit.ts) || !statusOk(store, f, hit.seq)) continue;
      meter.units += UNIT_EVENT;
      const e = getEvent(store, hit.seq);
      if (e && subjectOk(f, e) && !hidden.has(e.channelId)) results.push(e);
    }
  } finally {
    p.close();
  }
  const lastReturned = results.length > 0 ? results[results.length - 1].seq : opts.afterSeq;
  // A partial page continues from where the walk stopped, past what it looked at.
  const stoppedAt = desc ? pos + 1 : Math.max(lastReturned, pos - 1);
  return { results, after: partial ? stoppedAt : lastReturned, partial };
}

/**
 * How many events match in seq range [from, to) ∩ the filter's range. Exact unless the walk
 * needed more than `budget` units; then extrapolated from the part walked.
 */
export function countEvents(store: Store, f: ActivityFilter, range: { from: number; to?: number }, budget = COUNT_BUDGET): { count: number; exact: boolean } {
  const meter = new Meter();
  const p = plan(store, f, meter);
  const lo = Math.max(p.lo, range.from);
  const hi = Math.min(p.hi, range.to ?? Infinity);
  try {
    if (lo >= hi) return { count: 0, exact: true };
    // While a deleted channel of the account is being purged, each event's channel is checked.
    const hidden = hiddenChannels(store, f.accountId);
    const fast = hidden.size === 0 ? countByKeys(store, f, p, lo, hi) : null;
    if (fast !== null) return { count: fast, exact: true };
    let n = 0;
    let pos = lo;
    while (pos < hi) {
      if (meter.units > budget) {
        const walked = pos - lo;
        return { count: Math.round((n * (hi - lo)) / Math.max(1, walked)), exact: false };
      }
      const hit = nextMatch(p.streams, pos);
      if (!hit || hit.seq >= hi) break;
      pos = hit.seq + 1;
      if (!p.timeOk(hit.ts) || !statusOk(store, f, hit.seq)) continue;
      if (f.subject || hidden.size > 0) {
        meter.units += UNIT_EVENT;
        const e = getEvent(store, hit.seq);
        if (!e || !subjectOk(f, e) || hidden.has(e.channelId)) continue;
      }
      n++;
    }
    return { count: n, exact: true };
  } finally {
    p.close();
  }
}

/**
 * Counting without walking, when the filter is one index (or a union of disjoint ones: event
 * types) and needs no event reads: LMDB counts the keys of the range natively (~70 ms per
 * million). Seqs whose clock is well inside [startDate, endDate] need no timestamp check; the
 * edges are walked and checked. Returns null when this does not apply.
 */
function countByKeys(store: Store, f: ActivityFilter, p: Plan, lo: number, hi: number): number | null {
  if (f.subject || f.messageStatus === 'sent' || p.streams.length !== 1) return null;
  const s = p.streams[0];
  const parts = s instanceof IndexStream ? [s] : s instanceof UnionStream && !f.tags?.length ? s.parts : null;
  if (!parts) return null;
  // [innerLo, innerHi): every event's timestamp is inside the time filter (up to late events).
  const innerLo = f.startMs === undefined ? lo : Math.min(hi, Math.max(lo, firstSeqAtClock(store, f.startMs + LATE_EVENT_TOLERANCE_MS)));
  const innerHi = f.endMs === undefined ? hi : Math.max(innerLo, Math.min(hi, firstSeqAtClock(store, f.endMs + 1)));
  let n = 0;
  for (const part of parts) {
    const db = dbsOf(store)[part.db];
    n += db.getKeysCount({ start: [...part.prefix, innerLo], end: [...part.prefix, innerHi] });
    for (const [a, b] of [[lo, innerLo], [innerHi, hi]]) {
      if (a >= b) continue;
      for (const { value } of db.getRange({ start: [...part.prefix, a], end: [...part.prefix, b] })) if (p.timeOk(value as number)) n++;
    }
  }
  return n;
}

/** The seq range a cached count may be extended from: see ActivityQueries. */
export function eventLogBounds(store: Store): { floor: number; last: number } {
  return { floor: eventFloor(store), last: lastEventSeq(store) };
}

interface CachedCount {
  count: number;
  /** Counted over seqs below this. */
  upTo: number;
  floor: number;
  /** channelDeletions() when counted: a channel deleted since takes its events out of every count. */
  deletions: number;
}

/**
 * Pages plus totalCount. Paging through a big result would recount it for every page; instead
 * exact counts are remembered per filter together with the seq they were counted up to, and
 * the next request only counts the events appended since (new seqs are always higher). A
 * retention sweep moves the log's floor, which invalidates every remembered count.
 * Correct because seqs commit in order (one writer): no event can still commit below a `last`
 * a count has seen (the port's `after` cursor guarantee, store/port/events.ts). One instance per
 * open store (repos/events.ts), shared by every reader; bounded LRU.
 */
export class ActivityQueries {
  private readonly counts = new Map<string, CachedCount>();

  constructor(
    private readonly store: Store,
    private readonly maxCached = 1000,
  ) {}

  page(f: ActivityFilter, opts: PageOptions): ActivityPage {
    // No await in here: the page and its count read the same snapshot.
    const page = findEvents(this.store, f, opts);
    const total = this.total(f);
    return { ...page, totalCount: total.count, totalCountExact: total.exact };
  }

  /**
   * The queue shrinks as messages are sent, so counts with a status are not remembered:
   * queued is counted afresh over the queue (small), sent is all messages minus queued.
   */
  private total(f: ActivityFilter): { count: number; exact: boolean } {
    if (f.messageStatus) {
      const last = lastEventSeq(this.store);
      const queued = countEvents(this.store, { ...f, messageStatus: 'queued' }, { from: 1, to: last + 1 });
      if (f.messageStatus === 'queued') return queued;
      const all = this.total({ ...f, messageStatus: undefined });
      return { count: Math.max(0, all.count - queued.count), exact: all.exact && queued.exact };
    }
    const { floor, last } = eventLogBounds(this.store);
    const deletions = channelDeletions(this.store);
    const key = filterKey(f);
    const cached = this.counts.get(key);
    this.counts.delete(key);
    let count: { count: number; exact: boolean };
    if (cached && cached.floor === floor && cached.deletions === deletions && cached.upTo <= last + 1) {
      const delta = countEvents(this.store, f, { from: cached.upTo, to: last + 1 });
      count = { count: cached.count + delta.count, exact: delta.exact };
    } else {
      count = countEvents(this.store, f, { from: 1, to: last + 1 });
    }
    if (count.exact) {
      this.counts.set(key, { count: count.count, upTo: last + 1, floor, deletions });
      if (this.counts.size > this.maxCached) this.counts.delete(this.counts.keys().next().value!);
    }
    return count;
  }
}

/** A canonical text of a filter: equal filters, equal keys. */
function filterKey(f: ActivityFilter): string {
  return JSON.stringify([
    f.accountId,
    f.channelId ?? null,
    f.messageId ?? null,
    f.recipient?.toLowerCase() ?? null,
    f.subject?.toLowerCase() ?? null,
    f.tags ? [...new Set(f.tags)].sort() : null,
    f.mailType ?? null,
    f.eventTypes ? [...new Set(f.eventTypes)].sort() : null,
    f.startMs ?? null,
    f.endMs ?? null,
    f.messageStatus ?? null,
  ]);
}
