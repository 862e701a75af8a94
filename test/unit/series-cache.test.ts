/**
 * statistics/series-cache.ts over an in-memory source whose sums are a function of the bucket
 * and whose change marks the test moves by hand: what is read from the source, when, and that
 * every answer equals a fresh read.
 */
import { describe, expect, it } from 'vitest';
import { changedFromMs, MAX_CHANGE_MARKS, NO_CHANGES, withChange, type StatChanges } from '../../src/domain/stat-changes.js';
import { QUARTER_MS, zeroCounters, type StatTotals } from '../../src/domain/stat-counters.js';
import { SeriesCache, type SeriesKind, type SeriesSource } from '../../src/statistics/series-cache.js';
import type { CounterScope } from '../../src/store/port/events.js';

const HOUR = 3_600_000;
const NOW = Date.parse('2026-12-06T12:30:00Z');
const hours = (n: number, lastEnd = Math.floor(NOW / HOUR) * HOUR + HOUR) => Array.from({ length: n + 1 }, (_, i) => lastEnd - (n - i) * HOUR);

/** A source: bucket sums = version + start hour; reads and marks recorded. */
class Source implements SeriesSource {
  marks: StatChanges = NO_CHANGES;
  version = 0;
  reads: number[][] = [];
  changesCalls = 0;

  async changes(): Promise<StatChanges> {
    this.changesCalls++;
    return this.marks;
  }

  async read(edgesMs: number[]): Promise<StatTotals[]> {
    this.reads.push(edgesMs);
    return this.fresh(edgesMs);
  }

  fresh(edgesMs: number[]): StatTotals[] {
    return edgesMs.slice(1).map((_, i) => ({ transactional: { ...zeroCounters(), sent: this.version * 1e6 + edgesMs[i] / HOUR }, broadcast: zeroCounters() }));
  }

  change(fromMs: number): void {
    this.version++;
    this.marks = withChange(this.marks, Math.floor(fromMs / QUARTER_MS));
  }
}

const scope = { accountId: 'acct' };

describe('SeriesCache', () => {
  it('reads a series once, then only its buckets that have not ended (or ended less than closedAfterMs ago)', async () => {
    const src = new Source();
    const cache = new SeriesCache({ maxBuckets: 1000, now: () => NOW, closedAfterMs: 60_000 });
    const edges = hours(24);
    expect(await cache.read('hour', scope, edges, src)).toEqual(src.fresh(edges));
    expect(src.reads).toEqual([edges]);
    expect(cache.buckets).toBe(23);
    expect(await cache.read('hour', scope, edges, src)).toEqual(src.fresh(edges));
    expect(src.reads[1]).toEqual(edges.slice(-2));
    // The hour that ended 30 s ago is not closed yet with closedAfterMs one minute.
    const justEnded = new SeriesCache({ maxBuckets: 1000, now: () => Math.floor(NOW / HOUR) * HOUR + 30_000 });
    await justEnded.read('hour', scope, hours(3, Math.floor(NOW / HOUR) * HOUR), src);
    expect(justEnded.buckets).toBe(2);
  });

  it('forgets the buckets from the earliest changed quarter hour on, and keeps those before', async () => {
    const src = new Source();
    const cache = new SeriesCache({ maxBuckets: 1000, now: () => NOW });
    const edges = hours(24);
    await cache.read('hour', scope, edges, src);
    src.change(edges[10] + 20 * 60_000);
    src.change(edges[15]);
    const answer = await cache.read('hour', scope, edges, src);
    expect(src.reads.at(-1)).toEqual(edges.slice(10));
    expect(answer.slice(10)).toEqual(src.fresh(edges.slice(10)));
    // Before the change, the kept sums of version 0 (the source did not change them).
    expect(answer.slice(0, 10)).toEqual(new Source().fresh(edges.slice(0, 11)));
  });

  it('forgets everything when it missed more changes than the store keeps, or the marks went back', async () => {
    const src = new Source();
    const cache = new SeriesCache({ maxBuckets: 1000, now: () => NOW });
    const edges = hours(24);
    await cache.read('hour', scope, edges, src);
    for (let i = 0; i <= MAX_CHANGE_MARKS; i++) src.change(edges[23]);
    expect(await cache.read('hour', scope, edges, src)).toEqual(src.fresh(edges));
    expect(src.reads.at(-1)).toEqual(edges);
    src.marks = NO_CHANGES;
    src.version = 7;
    expect(await cache.read('hour', scope, edges, src)).toEqual(src.fresh(edges));
    expect(src.reads.at(-1)).toEqual(edges);
  });

  it('forgets everything at marks older than those it follows (a read that raced a newer one), and catches up at the next', async () => {
    const src = new Source();
    const cache = new SeriesCache({ maxBuckets: 1000, now: () => NOW });
    const edges = hours(6);
    src.change(edges[0]);
    await cache.read('hour', { accountId: 'acct', channelIds: ['x'] }, edges, src);
    const stale: SeriesSource = { changes: async () => NO_CHANGES, read: (e) => src.read(e) };
    await cache.read('hour', scope, edges, stale);
    expect(cache.buckets).toBe(5);
    await cache.read('hour', scope, edges, src);
    expect(src.reads.at(-1)).toEqual(edges);
  });

  it('keeps series apart by kind, channels and tags (as sets), and by account', async () => {
    const src = new Source();
    const cache = new SeriesCache({ maxBuckets: 1000, now: () => NOW });
    const edges = hours(4);
    await cache.read('hour', { accountId: 'acct', channelIds: ['a', 'b'], tags: ['t'] }, edges, src);
    await cache.read('hour', { accountId: 'acct', channelIds: ['b', 'a', 'a'], tags: ['t'] }, edges, src);
    expect(src.reads.at(-1)).toHaveLength(2);
    for (const [kind, s] of [
      ['day', { accountId: 'acct', channelIds: ['a', 'b'], tags: ['t'] }],
      ['hour', { accountId: 'acct', channelIds: ['a'], tags: ['t'] }],
      ['hour', { accountId: 'acct', channelIds: ['a', 'b'] }],
      ['hour', { accountId: 'other', channelIds: ['a', 'b'], tags: ['t'] }],
    ] satisfies Array<[SeriesKind, CounterScope]>) {
      await cache.read(kind, s, edges, src);
      expect(src.reads.at(-1)).toEqual(edges);
    }
  });

  it('holds at most maxBuckets, dropping the least recently read series first; 0 reads straight through', async () => {
    const src = new Source();
    const cache = new SeriesCache({ maxBuckets: 50, now: () => NOW });
    await cache.read('hour', { accountId: 'acct', channelIds: ['a'] }, hours(24), src);
    await cache.read('hour', { accountId: 'acct', channelIds: ['b'] }, hours(24), src);
    await cache.read('hour', { accountId: 'acct', channelIds: ['a'] }, hours(24), src);
    await cache.read('hour', { accountId: 'acct', channelIds: ['c'] }, hours(24), src);
    expect(cache.buckets).toBe(46);
    await cache.read('hour', { accountId: 'acct', channelIds: ['a'] }, hours(24), src);
    expect(src.reads.at(-1)).toHaveLength(2);
    await cache.read('hour', { accountId: 'acct', channelIds: ['b'] }, hours(24), src);
    expect(src.reads.at(-1)).toHaveLength(25);
    const off = new SeriesCache({ maxBuckets: 0, now: () => NOW });
    const calls = src.changesCalls;
    await off.read('hour', scope, hours(24), src);
    await off.read('hour', scope, hours(24), src);
    expect(src.reads.at(-1)).toHaveLength(25);
    expect(off.buckets).toBe(0);
    expect(src.changesCalls).toBe(calls);
  });
});

describe('stat change marks', () => {
  it('name the earliest quarter hour changed since an epoch, or everything when too far behind', () => {
    let m = NO_CHANGES;
    for (const q of [50, 40, 60]) m = withChange(m, q);
    expect(m).toEqual({ epoch: 3, quarters: [50, 40, 60] });
    expect(changedFromMs(m, 3)).toBeNull();
    expect(changedFromMs(m, 2)).toBe(60 * QUARTER_MS);
    expect(changedFromMs(m, 1)).toBe(40 * QUARTER_MS);
    expect(changedFromMs(m, 0)).toBe(40 * QUARTER_MS);
    expect(changedFromMs(m, 4)).toBe(0);
    for (let i = 0; i < MAX_CHANGE_MARKS; i++) m = withChange(m, 100 + i);
    expect(m.quarters).toHaveLength(MAX_CHANGE_MARKS);
    expect(changedFromMs(m, 3)).toBe(100 * QUARTER_MS);
    expect(changedFromMs(m, 2)).toBe(0);
  });
});
