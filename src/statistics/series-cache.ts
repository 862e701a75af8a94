/**
 * The sums of closed series buckets, kept in memory (issue 36: a year of days or a month of hours
 * in under 10 ms, read again and again by dashboards).
 *
 * A bucket that ended is final but for three rare writes (domain/stat-changes.ts): a bounce that
 * moves a delivery (an asynchronous DSN), an event stamped in a quarter hour that just ended, a
 * channel's delete. Each moves the account's change marks on in the commit that makes it, so
 * every read first asks the store for the marks (one record, one index probe on PostgreSQL) and
 * forgets the buckets from the earliest changed quarter hour on: a node of a cluster learns of a
 * change made through another node at its next read. Buckets that have not ended, and those that
 * ended less than `closedAfterMs` ago, are always read from the store.
 *
 * Why `closedAfterMs`: a writer moves the marks when it adds to a quarter hour before ITS current
 * one; a reader whose clock runs ahead must not take a bucket for closed while another node can
 * still add to it without moving the marks. It covers clock skew between nodes and commits in
 * flight at a bucket's end (a minute by default; NTP keeps nodes within milliseconds).
 *
 * Bounded by `maxBuckets` over all series, least recently read series out first. Callers must
 * not change the StatTotals they get.
 */
import { changedFromMs, type StatChanges } from '../domain/stat-changes.js';
import type { StatTotals } from '../domain/stat-counters.js';
import type { CounterScope } from '../store/port/events.js';

export type SeriesKind = 'day' | 'hour';

export interface SeriesCacheOptions {
  /** Most buckets kept over all series; 0 keeps none. */
  maxBuckets: number;
  closedAfterMs?: number;
  now?: () => number;
  /** After each read: its points answered from memory and read from the store (the metrics). */
  onRead?: (fromCache: number, fromStore: number) => void;
}

interface Cached {
  endMs: number;
  totals: StatTotals;
}

interface SeriesEntry {
  accountId: string;
  buckets: Map<number, Cached>;
}

/** What a read needs from the store: the marks first, then the sums of a run of buckets. */
export interface SeriesSource {
  changes(accountId: string): Promise<StatChanges>;
  read(edgesMs: number[]): Promise<StatTotals[]>;
}

export const DEFAULT_CLOSED_AFTER_MS = 60_000;

export class SeriesCache {
  /** Insertion order is recency: a read moves its series to the end. */
  private readonly series = new Map<string, SeriesEntry>();
  /** The epoch of the marks each account's buckets are valid at. */
  private readonly epochs = new Map<string, number>();
  private size = 0;
  private readonly closedAfterMs: number;
  private readonly now: () => number;

  constructor(private readonly opts: SeriesCacheOptions) {
    this.closedAfterMs = opts.closedAfterMs ?? DEFAULT_CLOSED_AFTER_MS;
    this.now = opts.now ?? Date.now;
  }

  /** Buckets kept now (for tests and metrics). */
  get buckets(): number {
    return this.size;
  }

  /** One StatTotals per bucket [edgesMs[i], edgesMs[i + 1]): kept ones from memory, the rest read in one run. */
  async read(kind: SeriesKind, scope: CounterScope, edgesMs: number[], source: SeriesSource): Promise<StatTotals[]> {
    if (this.opts.maxBuckets === 0 || edgesMs.length < 2) {
      this.opts.onRead?.(0, edgesMs.length - 1);
      return source.read(edgesMs);
    }
    const marks = await source.changes(scope.accountId);
    this.sync(scope.accountId, marks);
    const key = seriesKey(kind, scope);
    const entry = this.touch(key);
    const out: (StatTotals | undefined)[] = [];
    let first = -1;
    let last = -1;
    for (let i = 0; i + 1 < edgesMs.length; i++) {
      const hit = entry?.buckets.get(edgesMs[i]);
      out.push(hit && hit.endMs === edgesMs[i + 1] ? hit.totals : undefined);
      if (out[i]) continue;
      if (first < 0) first = i;
      last = i;
    }
    const missing = first < 0 ? 0 : last - first + 1;
    this.opts.onRead?.(out.length - missing, missing);
    if (missing === 0) return out as StatTotals[];
    // One read from the first bucket missing to the last: a read costs its span, not its buckets.
    const span = edgesMs.slice(first, last + 2);
    const fresh = await source.read(span);
    fresh.forEach((t, k) => (out[first + k] = t));
    // Another read may have followed newer marks meanwhile: then this one's sums may be older.
    if (this.epochs.get(scope.accountId) === marks.epoch) this.keep(key, scope.accountId, span, fresh);
    return out as StatTotals[];
  }

  /**
   * Brings the account's buckets up to `marks`. Marks lower than those followed are a store that
   * went back (a restored database) or a read that raced a newer one: both forget everything, and
   * the sums read after those marks may be kept under them (they are at least that new; the next
   * read's newer marks forget what changed since).
   */
  private sync(accountId: string, marks: StatChanges): void {
    const seen = this.epochs.get(accountId);
    if (seen === marks.epoch) return;
    const fromMs = seen === undefined ? null : changedFromMs(marks, seen);
    if (fromMs !== null) this.forget(accountId, fromMs);
    this.epochs.set(accountId, marks.epoch);
  }

  /** Drops the account's buckets that end after `fromMs` (they hold a changed quarter hour). */
  private forget(accountId: string, fromMs: number): void {
    for (const [key, entry] of this.series) {
      if (entry.accountId !== accountId) continue;
      for (const [startMs, b] of entry.buckets) {
        if (b.endMs <= fromMs) continue;
        entry.buckets.delete(startMs);
        this.size--;
      }
      if (entry.buckets.size === 0) this.series.delete(key);
    }
  }

  /** The series' kept buckets, moved to the recent end (its key holds the account). */
  private touch(key: string): SeriesEntry | undefined {
    const entry = this.series.get(key);
    if (!entry) return undefined;
    this.series.delete(key);
    this.series.set(key, entry);
    return entry;
  }

  private keep(key: string, accountId: string, edgesMs: number[], totals: StatTotals[]): void {
    const closedBefore = this.now() - this.closedAfterMs;
    let entry = this.series.get(key);
    if (!entry) this.series.set(key, (entry = { accountId, buckets: new Map() }));
    for (let i = 0; i < totals.length && edgesMs[i + 1] <= closedBefore; i++) {
      if (!entry.buckets.has(edgesMs[i])) this.size++;
      entry.buckets.set(edgesMs[i], { endMs: edgesMs[i + 1], totals: totals[i] });
    }
    if (entry.buckets.size === 0) this.series.delete(key);
    this.evict();
  }

  /** Least recently read series first, until the cap holds. */
  private evict(): void {
    for (const [key, entry] of this.series) {
      if (this.size <= this.opts.maxBuckets) return;
      this.size -= entry.buckets.size;
      this.series.delete(key);
    }
  }
}

/** A series' identity: its kind and scope (channels and tags as sets). */
function seriesKey(kind: SeriesKind, s: CounterScope): string {
  const set = (xs: string[] | undefined) => (xs === undefined ? null : [...new Set(xs)].sort());
  return JSON.stringify([kind, s.accountId, set(s.channelIds), set(s.tags?.length ? s.tags : undefined)]);
}
