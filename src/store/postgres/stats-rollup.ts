/**
 * The statistics rollup (schema/stats-rollup.ts, domain/stat-levels.ts): written with the other
 * counters inside appendEvents' transaction (one more pipelined upsert, no extra commit), and read
 * for untagged series and totals in one statement of a few index ranges. The LMDB engine keeps
 * the same records (store/lmdb/stats-rollup.ts), so both answer alike.
 */
import { coarseFor, QUARTERS_IN, placeRecord, rollupPlan, VectorSums, type RollupGrain, type RollupRead } from '../../domain/stat-levels.js';
import { quarterOf, zeroCounters, type StatCounters } from '../../domain/stat-counters.js';
import type { MailType } from '../../domain/types.js';
import type { CounterScope, SeriesQuery, StatTotals, TotalsQuery } from '../port/events.js';
import type { Db, Tx } from './client.js';
import type { CounterDelta } from './stats-deltas.js';

export interface RollupRow extends StatCounters {
  account_id: string;
  channel_id: string;
  grain: RollupGrain;
  bucket: number;
  mail_type: MailType;
}

/** The rollup rows one change at quarter hour `quarter` adds to: each grain, its channel and the account (''). */
export function addToRollupRows(
  rows: Map<string, RollupRow>,
  at: { accountId: string; channelId: string; mailType: MailType; quarter: number },
  add: Partial<StatCounters>,
  grains: readonly RollupGrain[] = ['q', 'h', 'd'],
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

export interface RollupSum {
  grain: RollupGrain;
  bucket: number;
  mailType: MailType;
  value: StatCounters;
}

type SumRow = StatCounters & { grain: RollupGrain; bucket: number; mail_type: MailType };

/**
 * The sums per (grain, bucket, mail type) of the scope's rollup rows in `reads`: the chosen
 * channels, or the account's '' rows less those of its channels being purged (channel_purges),
 * which still count in '' until their purge takes them off. One statement, one index range per
 * (channel, read).
 */
export async function rollupSums(db: Db, q: CounterScope, reads: readonly RollupRead[]): Promise<RollupSum[]> {
  if (reads.length === 0) return [];
  const scope = q.channelIds
    ? db`SELECT DISTINCT ch AS channel_id, 1 AS sign FROM unnest(${q.channelIds}::text[]) AS ch
         WHERE NOT EXISTS (SELECT 1 FROM channel_purges p WHERE p.channel_id = ch)`
    : db`SELECT '' AS channel_id, 1 AS sign UNION ALL SELECT p.channel_id, -1 FROM channel_purges p`;
  const rows = await db<SumRow[]>`
    WITH c AS (${scope})
    SELECT s.grain, s.bucket, s.mail_type, sum(c.sign * s.sent)::int8 AS sent, sum(c.sign * s.delivered)::int8 AS delivered,
      sum(c.sign * s.opened)::int8 AS opened, sum(c.sign * s.clicked)::int8 AS clicked, sum(c.sign * s.bounced)::int8 AS bounced,
      sum(c.sign * s.unsubscribed)::int8 AS unsubscribed, sum(c.sign * s.complained)::int8 AS complained
    FROM c
    CROSS JOIN unnest(${reads.map((r) => r.grain)}::text[], ${reads.map((r) => r.from)}::int8[], ${reads.map((r) => r.to)}::int8[]) AS r(grain, lo, hi)
    CROSS JOIN LATERAL (
      SELECT * FROM stat_rollup s
      WHERE s.account_id = ${q.accountId} AND s.channel_id = c.channel_id AND s.grain = r.grain::"char" AND s.bucket BETWEEN r.lo AND r.hi
      -- OFFSET 0 keeps this a subquery run per (channel, range), one primary-key range scan each: flattened
      -- into a join, the planner may scan the account's whole rollup and filter it against every range.
      OFFSET 0
    ) s
    GROUP BY s.grain, s.bucket, s.mail_type`;
  return rows.map(({ grain, bucket, mail_type, ...value }) => ({ grain, bucket, mailType: mail_type, value }));
}

function addTo(out: StatTotals, mailType: MailType, value: StatCounters, sign: number): void {
  const sum = out[mailType];
  if (!sum) return;
  for (const name of Object.keys(sum) as (keyof StatCounters)[]) sum[name] += sign * (value[name] ?? 0);
}

/** An untagged series from the rollup, read on at most grain `max` ('h': hourly series; 'd': day series). */
export async function rollupSeries(db: Db, q: SeriesQuery, max: RollupGrain): Promise<StatTotals[]> {
  const edges = q.edgesMs.map(quarterOf);
  const plan = rollupPlan(edges, coarseFor(edges, max));
  const sums = new VectorSums(plan.buckets);
  if (plan.buckets === 0) return sums.totals();
  for (const s of await rollupSums(db, q, plan.reads)) placeRecord(plan, s.grain, s.bucket, (i, sign) => sums.addCounters(i, s.mailType, s.value, sign));
  return sums.totals();
}

/** Untagged totals over UTC days [fromDay, toDay] from the day rows. */
export async function rollupTotals(db: Db, q: TotalsQuery): Promise<StatTotals> {
  const out: StatTotals = { transactional: zeroCounters(), broadcast: zeroCounters() };
  for (const s of await rollupSums(db, q, [{ grain: 'd', from: q.fromDay, to: q.toDay }])) addTo(out, s.mailType, s.value, 1);
  return out;
}
