/**
 * The statistics rollup (issue 36, domain/stat-levels.ts): the untagged counters again per
 * [accountId, channelId, grain, bucket] in statsRollup, grain 'q' (UTC quarter hour), 'h' (UTC
 * hour) or 'd' (UTC day), with channel '' for the whole account, both mail types in one record.
 * Written with the other counters at the end of the same write (write-scope.ts: no extra commit);
 * a series then reads a few hundred records of one key range instead of a record per quarter hour,
 * channel and mail type (a year of days: 366 instead of 7,320; 744 hours: 744 instead of ~35,000).
 *
 * Invariant: the channel '' record of a bucket is the sum of the channel records of that bucket.
 * Channels being purged still count in '' and are taken away at read (hiddenChannels); their purge
 * (purgeRollupInTxn) removes their records and takes them off '' in the same transaction.
 *
 * Tag filters read the tag databases as before (stats.ts). Data written before the rollup
 * existed is rolled up once at start (buildRollup, flag ROLLUP_BUILT in meta); until then every
 * read goes the old way.
 */
import type { EventRecord } from '../../domain/types.js';
import { quarterOf, type StatCounters, type StatTotals } from '../../domain/stat-counters.js';
import { addVector, bumpVector, coarseFor, placedReads, QUARTERS_IN, rollupPlan, VectorSums, zeroVector, type RollupGrain, type RollupVector } from '../../domain/stat-levels.js';
import type { CounterScope, SeriesQuery, TotalsQuery } from '../port/events.js';
import { dbsOf } from './databases.js';
import type { Store } from './env.js';
import { KEY_MAX } from './layout.js';
import { hiddenChannels } from './purge-queue.js';

export const ROLLUP_BUILT = 'statsRollupBuilt';
const GRAINS = ['q', 'h', 'd'] as const;

type RollupKey = [string, string, RollupGrain, number];

interface PendingQuarter {
  accountId: string;
  channelId: string;
  quarter: number;
  add: RollupVector;
}

/**
 * Inside a write: one counter change of an event at timeMs. Summed per channel and quarter hour
 * while the writes of a group commit run (one map entry per change), spread over the three grains
 * and the account ('') once at its end (flushRollup): 100 messages of one quarter hour write 6 records.
 */
export function rollupInTxn(store: Store, e: Pick<EventRecord, 'accountId' | 'channelId' | 'mailType'>, timeMs: number, name: keyof StatCounters, by: number): void {
  const pending = store.requireWriteScope().part<Map<string, PendingQuarter>>('statisticsRollup', { init: () => new Map(), flush: (p) => flushRollup(store, p.values()), merge: mergeQuarters });
  const quarter = quarterOf(timeMs);
  const id = `${e.accountId}\u0000${e.channelId}\u0000${quarter}`;
  let p = pending.get(id);
  if (!p) pending.set(id, (p = { accountId: e.accountId, channelId: e.channelId, quarter, add: zeroVector() }));
  bumpVector(p.add, e.mailType, name, by);
}

/** A finished write's quarter hours, added to its group commit's (write-scope.ts merge). */
function mergeQuarters(into: Map<string, PendingQuarter>, from: Map<string, PendingQuarter>): void {
  for (const [id, q] of from) {
    const mine = into.get(id);
    if (mine) addVector(mine.add, q.add);
    else into.set(id, q);
  }
}

function flushRollup(store: Store, quarters: Iterable<PendingQuarter>): void {
  const records = new Map<string, { key: RollupKey; add: RollupVector }>();
  for (const q of quarters) {
    for (const grain of GRAINS) {
      const bucket = Math.floor(q.quarter / QUARTERS_IN[grain]);
      for (const channel of [q.channelId, '']) {
        const id = `${q.accountId}\u0000${channel}\u0000${grain}\u0000${bucket}`;
        let r = records.get(id);
        if (!r) records.set(id, (r = { key: [q.accountId, channel, grain, bucket], add: zeroVector() }));
        addVector(r.add, q.add);
      }
    }
  }
  const db = dbsOf(store).statsRollup;
  for (const { key, add } of records.values()) {
    const next = zeroVector();
    addVector(next, (db.get(key) as number[] | undefined) ?? next);
    addVector(next, add);
    db.put(key, next);
  }
}

/** Whether reads may use the rollup: it holds every counter (written since, or built at start). */
export function rollupReady(store: Store): boolean {
  return dbsOf(store).meta.get(ROLLUP_BUILT) === true;
}

/** The channels to read and their sign: the chosen ones, or the account ('') less the channels being purged. */
function scopes(store: Store, q: CounterScope): [string, number][] {
  const hidden = hiddenChannels(store, q.accountId);
  if (q.channelIds) return [...new Set(q.channelIds)].filter((c) => !hidden.has(c)).map((c) => [c, 1]);
  return [['', 1], ...[...hidden].map((c): [string, number] => [c, -1])];
}

function walk(store: Store, accountId: string, channel: string, grain: RollupGrain, from: number, to: number, visit: (bucket: number, v: number[]) => void): void {
  const range = { start: [accountId, channel, grain, from], end: [accountId, channel, grain, to + 1] };
  for (const { key, value } of dbsOf(store).statsRollup.getRange(range)) visit((key as RollupKey)[3], value as number[]);
}

/**
 * A series from the rollup, read on at most grain `max` ('h': hourly series; 'd': day series).
 * Each walk knows where its records count (placedReads): a piece's records go to its edge and
 * the bucket before, coarse records (in bucket order) to the bucket of the last mark at or
 * before them; no search and no closure per record.
 */
export function rollupSeries(store: Store, q: SeriesQuery, max: RollupGrain): StatTotals[] {
  const edges = q.edgesMs.map(quarterOf);
  const plan = rollupPlan(edges, coarseFor(edges, max));
  const sums = new VectorSums(plan.buckets);
  if (plan.buckets === 0) return sums.totals();
  const { marks, buckets } = plan;
  for (const [channel, sign] of scopes(store, q)) {
    for (const r of placedReads(plan)) {
      if (r.edge >= 0) {
        const [at, w] = [r.edge, r.sign * sign];
        walk(store, q.accountId, channel, r.grain, r.from, r.to, (_b, v) => {
          if (at < buckets) sums.add(at, v, w);
          if (at > 0) sums.add(at - 1, v, -w);
        });
        continue;
      }
      let i = 0;
      walk(store, q.accountId, channel, r.grain, r.from, r.to, (b, v) => {
        while (i + 1 < marks.length && marks[i + 1] <= b) i++;
        if (i < buckets && b >= marks[0]) sums.add(i, v, sign);
      });
    }
  }
  return sums.totals();
}

/** Totals over UTC days [fromDay, toDay] from the day records. */
export function rollupTotals(store: Store, q: TotalsQuery): StatTotals {
  const sums = new VectorSums(1);
  for (const [channel, sign] of scopes(store, q)) walk(store, q.accountId, channel, 'd', q.fromDay, q.toDay, (_b, v) => sums.add(0, v, sign));
  return sums.totals()[0];
}

/**
 * A deleted channel's purge: up to `max` of its rollup records, each removed and taken off the
 * account's record of the same bucket in this transaction (the '' invariant). Its own key range,
 * so no cursor is needed: what is removed is gone from the range.
 */
export function purgeRollupInTxn(store: Store, p: { accountId: string; channelId: string }, max: number): { removed: number; finished: boolean } {
  const db = dbsOf(store).statsRollup;
  const page = [...db.getRange({ start: [p.accountId, p.channelId], end: [p.accountId, p.channelId, KEY_MAX], limit: max })];
  for (const { key, value } of page) {
    const [accountId, , grain, bucket] = key as RollupKey;
    const account: RollupKey = [accountId, '', grain, bucket];
    const next = zeroVector();
    addVector(next, (db.get(account) as number[] | undefined) ?? next);
    addVector(next, value as number[], -1);
    db.put(account, next);
    db.remove(key);
  }
  return { removed: page.length, finished: page.length < max };
}
