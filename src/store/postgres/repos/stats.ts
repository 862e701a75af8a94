/**
 * The PostgreSQL engine's StatisticsPort (store/port/events.ts): reads over the counters
 * appendEvents keeps (stats-read.ts), with the LMDB engine's bucket arithmetic, so both answer
 * alike: totals from the UTC day rows, series from the quarter-hour rows, day series from the day
 * rows plus the quarter hours between each edge and its nearest UTC midnight. A read's cost
 * grows with the buckets and channels it covers, never with the number of events.
 */
import { DAY_MS, QUARTER_MS, quarterOf, zeroCounters, type StatCounters } from '../../../domain/stat-counters.js';
import type { MailType } from '../../../domain/types.js';
import type { CounterScope, SeriesQuery, StatisticsPort, StatTotals, TotalsQuery } from '../../port/events.js';
import type { PgContext } from '../context.js';
import { bucketSums } from '../stats-read.js';
import { rollupSeries, rollupTotals } from '../stats-rollup.js';
import { statChanges } from '../stats-changes.js';
import type { StatChanges } from '../../../domain/stat-changes.js';

const QUARTERS_PER_DAY = DAY_MS / QUARTER_MS;

const zeroTotals = (): StatTotals => ({ transactional: zeroCounters(), broadcast: zeroCounters() });

function addTo(out: StatTotals, mailType: MailType, value: StatCounters, sign = 1): void {
  const sum = out[mailType];
  if (!sum) return;
  for (const name of Object.keys(sum) as (keyof StatCounters)[]) sum[name] += sign * (value[name] ?? 0);
}

/** The index of the bucket [edges[i], edges[i + 1]) holding `b`, or -1 outside every bucket. */
function bucketIndex(edges: readonly number[], b: number): number {
  let lo = 0;
  let hi = edges.length - 1;
  if (b < edges[0] || b >= edges[hi]) return -1;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (b >= edges[mid]) lo = mid;
    else hi = mid;
  }
  return lo;
}

/** Without a tag filter a read goes to the rollup of hours and days (stats-rollup.ts, migration 4). */
const untagged = (q: CounterScope) => !q.tags || q.tags.length === 0;

/**
 * A day series under a tag filter (the rollup holds untagged counters only). For bucket i, with
 * W(e) = the quarter hours in [edge, its nearest UTC midnight) (negative when the midnight comes
 * first): sum[eᵢ, eᵢ₊₁) = W(eᵢ) + days[midnightᵢ, midnightᵢ₊₁) − W(eᵢ₊₁)
 * (store/lmdb/stats.ts statisticsDaySeries).
 */
async function taggedDaySeries(ctx: PgContext, q: SeriesQuery): Promise<StatTotals[]> {
  const edges = q.edgesMs.map(quarterOf);
  const midnights = edges.map((e) => Math.round(e / QUARTERS_PER_DAY));
  const out = edges.slice(1).map(zeroTotals);
  if (out.length === 0) return out;
  // The quarter hours between each edge and its midnight: ranges at least a day apart, so disjoint.
  const near = edges.flatMap((edge, i) => {
    const midnight = midnights[i] * QUARTERS_PER_DAY;
    if (edge === midnight) return [];
    return [edge < midnight ? { i, from: edge, to: midnight - 1, sign: 1 } : { i, from: midnight, to: edge - 1, sign: -1 }];
  });
  // Sums come in bucket order and the ranges are ascending: one pointer walks both.
  let k = 0;
  for (const s of await bucketSums(ctx.sql, 'q', q, near)) {
    while (s.bucket > near[k].to) k++;
    const { i, sign } = near[k];
    if (i < out.length) addTo(out[i], s.mailType, s.value, sign);
    if (i > 0) addTo(out[i - 1], s.mailType, s.value, -sign);
  }
  const first = midnights[0];
  const last = midnights[midnights.length - 1];
  if (last <= first) return out;
  for (const s of await bucketSums(ctx.sql, 'd', q, [{ from: first, to: last - 1 }])) {
    const i = bucketIndex(midnights, s.bucket);
    if (i >= 0) addTo(out[i], s.mailType, s.value);
  }
  return out;
}

export function pgStatistics(ctx: PgContext): StatisticsPort {
  return {
    async totals(q: TotalsQuery): Promise<StatTotals> {
      if (untagged(q)) return rollupTotals(ctx.sql, q);
      const out = zeroTotals();
      for (const s of await bucketSums(ctx.sql, 'd', q, [{ from: q.fromDay, to: q.toDay }])) addTo(out, s.mailType, s.value);
      return out;
    },

    async series(q: SeriesQuery): Promise<StatTotals[]> {
      if (untagged(q)) return rollupSeries(ctx.sql, q, 'h');
      const edges = q.edgesMs.map(quarterOf);
      const out = edges.slice(1).map(zeroTotals);
      if (out.length === 0) return out;
      for (const s of await bucketSums(ctx.sql, 'q', q, [{ from: edges[0], to: edges[edges.length - 1] - 1 }])) {
        const i = bucketIndex(edges, s.bucket);
        if (i >= 0) addTo(out[i], s.mailType, s.value);
      }
      return out;
    },

    async daySeries(q: SeriesQuery): Promise<StatTotals[]> {
      return untagged(q) ? rollupSeries(ctx.sql, q, 'd') : taggedDaySeries(ctx, q);
    },

    changes(accountId: string): Promise<StatChanges> {
      return statChanges(ctx.sql, accountId);
    },
  };
}
