/**
 * Reading the statistics rollup (stat_rollup, migration 4) for a series or totals: one statement
 * that reads the plan's records (domain/stat-levels.ts) and sums them per bucket of the answer,
 * so the client gets a row per bucket and mail type (732 for a year of days) instead of one per
 * record read (5,800 for a year of Kolkata days), and places nothing itself.
 *
 * Each read carries its placement (placedReads): a coarse record counts in bucket
 * width_bucket(bucket, marks) − 1, a finer piece's records count +sign in bucket `edge` and
 * −sign in bucket `edge − 1`; buckets outside [0, buckets) are dropped, as the LMDB engine's
 * rollupSeries does (lmdb/stats-rollup.ts).
 *
 * JIT is off on the store's connections (client.ts): the planner prices a year of Kolkata days
 * (735 index ranges per channel) far above jit_above_cost, and compiling took 50 to 140 ms for
 * this statement, which runs in a few.
 */
import type { PlacedRead } from '../../domain/stat-levels.js';
import type { StatCounters } from '../../domain/stat-counters.js';
import type { MailType } from '../../domain/types.js';
import type { CounterScope } from '../port/events.js';
import type { Db, Sql } from './client.js';

export interface BucketSum {
  i: number;
  mailType: MailType;
  value: StatCounters;
}

/** What to read and where it counts: `marks` ascending (coarse records), `buckets` the answer's length. */
export interface PlacedReads {
  reads: readonly PlacedRead[];
  marks: readonly number[];
  buckets: number;
}

type SumRow = StatCounters & { i: number; mail_type: MailType };

/**
 * The scope's channels and their sign: the chosen ones (less those being purged), or the
 * account's '' rows less the rows of its channels being purged (channel_purges), which still
 * count in '' until their purge takes them off.
 */
function scopeOf(db: Db, q: CounterScope) {
  return q.channelIds
    ? db`SELECT DISTINCT ch AS channel_id, 1 AS sign FROM unnest(${q.channelIds}::text[]) AS ch
         WHERE NOT EXISTS (SELECT 1 FROM channel_purges p WHERE p.channel_id = ch)`
    : db`SELECT '' AS channel_id, 1 AS sign UNION ALL SELECT p.channel_id, -1 FROM channel_purges p WHERE p.account_id = ${q.accountId}`;
}

export async function rollupBucketSums(sql: Sql, q: CounterScope, p: PlacedReads): Promise<BucketSum[]> {
  if (p.reads.length === 0 || p.buckets === 0) return [];
  const rows = await sql<SumRow[]>`
      WITH c AS (${scopeOf(sql, q)})
      SELECT t.i, s.mail_type, sum(t.w * s.sent)::int8 AS sent, sum(t.w * s.delivered)::int8 AS delivered,
        sum(t.w * s.opened)::int8 AS opened, sum(t.w * s.clicked)::int8 AS clicked, sum(t.w * s.bounced)::int8 AS bounced,
        sum(t.w * s.unsubscribed)::int8 AS unsubscribed, sum(t.w * s.complained)::int8 AS complained
      FROM c
      CROSS JOIN unnest(${p.reads.map((r) => r.grain)}::text[], ${p.reads.map((r) => r.from)}::int8[], ${p.reads.map((r) => r.to)}::int8[],
        ${p.reads.map((r) => r.edge)}::int4[], ${p.reads.map((r) => r.sign)}::int4[]) AS r(grain, lo, hi, edge, sign)
      CROSS JOIN LATERAL (
        SELECT * FROM stat_rollup s
        WHERE s.account_id = ${q.accountId} AND s.channel_id = c.channel_id AND s.grain = r.grain::"char" AND s.bucket BETWEEN r.lo AND r.hi
        -- OFFSET 0 keeps this a subquery run per (channel, range), one primary-key range scan each: flattened
        -- into a join, the planner may scan the account's whole rollup and filter it against every range.
        OFFSET 0
      ) s
      -- A piece's records count twice (side 0: its edge, side 1: the bucket before), coarse ones once.
      JOIN (VALUES (0), (1)) AS side(n) ON side.n = 0 OR r.edge >= 0
      CROSS JOIN LATERAL (VALUES (
        CASE WHEN r.edge < 0 THEN width_bucket(s.bucket, ${p.marks as number[]}::int8[]) - 1 ELSE r.edge - side.n END,
        c.sign * r.sign * (1 - 2 * side.n)
      )) AS t(i, w)
      WHERE t.i >= 0 AND t.i < ${p.buckets}::int4
      GROUP BY t.i, s.mail_type`;
  return rows.map((r) => ({
    i: r.i,
    mailType: r.mail_type,
    value: { sent: r.sent, delivered: r.delivered, opened: r.opened, clicked: r.clicked, bounced: r.bounced, unsubscribed: r.unsubscribed, complained: r.complained },
  }));
}
