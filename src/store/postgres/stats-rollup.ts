/**
 * The statistics rollup (schema/stats-rollup.ts, domain/stat-levels.ts): written with the other
 * counters inside appendEvents' transaction (one more pipelined upsert, no extra commit), and read
 * for untagged series and totals in one statement that sums per bucket (stats-rollup-read.ts).
 * The LMDB engine keeps the same records (store/lmdb/stats-rollup.ts), so both answer alike.
 */
import { coarseFor, QUARTERS_IN, rollupPlan, VectorSums, type EdgeLevels, type RollupGrain } from '../../domain/stat-levels.js';
import { phaseReads } from '../../domain/stat-phases.js';
import { quarterOf, zeroCounters, type StatCounters } from '../../domain/stat-counters.js';
import type { MailType } from '../../domain/types.js';
import type { SeriesQuery, StatTotals, TotalsQuery } from '../port/events.js';
import type { Sql, Tx } from './client.js';
import { NO_FINE, rollupBucketSums } from './stats-rollup-read.js';
import type { CounterDelta } from './stats-deltas.js';

export interface RollupRow extends StatCounters {
  account_id: string;
  channel_id: string;
  grain: RollupGrain;
  bucket: number;
  mail_type: MailType;
}

/** The levels this engine keeps between the quarter hour and the day (migration 7 added the six hours). */
export const PG_EDGE_LEVELS: EdgeLevels = ['h', 's'];

/** The grains every change is counted in. */
export const PG_GRAINS: readonly RollupGrain[] = ['q', 'h', 's', 'd'];

/** The rollup rows one change at quarter hour `quarter` adds to: each grain, its channel and the account (''). */
export function addToRollupRows(
  rows: Map<string, RollupRow>,
  at: { accountId: string; channelId: string; mailType: MailType; quarter: number },
  add: Partial<StatCounters>,
  grains: readonly RollupGrain[] = PG_GRAINS,
): void {
  for (const grain of grains) {
    const bucket = Math.floor(at.quarter / QUARTERS_IN[grain]);
    for (const channel of [at.channelId, '']) {
      const key = JSON.stringify([at.accountId, channel, grain, bucket, at.mailType]);
      let row = rows.get(key);
      if (!row) rows.set(key, (row = { account_id: at.accountId, channel_id: channel, grain, bucket, mail_type: at.mailType, ...zeroCounters() }));
      for (const name of Object.keys(add) as (keyof StatCounters)[]) row[name] += add[name] ?? 0;
    }
  }
}

/** The rollup rows the deltas touch, summed, in key order (concurrent upserts never wait in a cycle). */
export function rollupRows(deltas: readonly CounterDelta[]): RollupRow[] {
  const rows = new Map<string, RollupRow>();
  for (const { event: e, name, by } of deltas) {
    addToRollupRows(rows, { accountId: e.accountId, channelId: e.channelId, mailType: e.mailType, quarter: quarterOf(e.timeMs) }, { [name]: by });
  }
  return sortedRows(rows);
}

export function sortedRows(rows: Map<string, RollupRow>): RollupRow[] {
  return [...rows.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, row]) => row);
}

export async function upsertRollup(tx: Tx, rows: readonly RollupRow[]): Promise<void> {
  if (rows.length === 0) return;
  await tx`
    INSERT INTO stat_rollup (account_id, channel_id, grain, bucket, mail_type, sent, delivered, opened, clicked, bounced, unsubscribed, complained)
    SELECT account_id, channel_id, grain, bucket, mail_type, sent, delivered, opened, clicked, bounced, unsubscribed, complained
    FROM jsonb_to_recordset(${tx.json(rows as never)}) AS x(account_id text, channel_id text, grain "char", bucket int8, mail_type text,
      sent int8, delivered int8, opened int8, clicked int8, bounced int8, unsubscribed int8, complained int8)
    ON CONFLICT (account_id, channel_id, grain, bucket, mail_type) DO UPDATE SET
      sent = stat_rollup.sent + EXCLUDED.sent,
      delivered = stat_rollup.delivered + EXCLUDED.delivered,
      opened = stat_rollup.opened + EXCLUDED.opened,
      clicked = stat_rollup.clicked + EXCLUDED.clicked,
      bounced = stat_rollup.bounced + EXCLUDED.bounced,
      unsubscribed = stat_rollup.unsubscribed + EXCLUDED.unsubscribed,
      complained = stat_rollup.complained + EXCLUDED.complained`;
}

/** An untagged series from the rollup, read on at most grain `max` ('h': hourly series; 'd': day series). */
export async function rollupSeries(sql: Sql, q: SeriesQuery, max: RollupGrain): Promise<StatTotals[]> {
  const edges = q.edgesMs.map(quarterOf);
  const plan = rollupPlan(edges, coarseFor(edges, max), PG_EDGE_LEVELS);
  const coarse = plan.reads.find((r) => r.grain === plan.coarse) ?? null;
  const sums = new VectorSums(plan.buckets);
  for (const s of await rollupBucketSums(sql, q, { coarse, marks: plan.marks, buckets: plan.buckets, fine: phaseReads(plan) })) sums.addCounters(s.i, s.mailType, s.value, 1);
  return sums.totals();
}

/** Untagged totals over UTC days [fromDay, toDay] from the day rows: one bucket from fromDay on. */
export async function rollupTotals(sql: Sql, q: TotalsQuery): Promise<StatTotals> {
  const sums = new VectorSums(1);
  const coarse = { grain: 'd' as const, from: q.fromDay, to: q.toDay };
  for (const s of await rollupBucketSums(sql, q, { coarse, marks: [q.fromDay], buckets: 1, fine: NO_FINE })) sums.addCounters(0, s.mailType, s.value, 1);
  return sums.totals()[0];
}
