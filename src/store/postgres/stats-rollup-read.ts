/**
 * Reading the statistics rollup (stat_rollup, migrations 4 and 5) for a series or totals: one
 * statement that reads the plan's records (domain/stat-levels.ts) and sums them per bucket of the
 * answer, so the client gets a row per bucket and mail type (732 for a year of days) and places
 * nothing itself.
 *
 * - Coarse records (the range between the first and last mark) count in bucket
 *   width_bucket(bucket, marks) − 1.
 * - The finer records at the edges are read by their phase in the UTC day (domain/stat-phases.ts,
 *   indexes stat_rollup_phase for quarter hours and hours, stat_rollup_phase_six for six hours,
 *   migrations 5 and 7): one range per (grain, phase), each record placed in the piece of its
 *   grain that holds it (width_bucket over the pieces' starts, then its end), dropped if none does.
 *   They are summed per edge into W(e), which counts +W in bucket e and −W in bucket e − 1.
 * - Buckets outside [0, buckets) are dropped, as the LMDB engine's rollupSeries does.
 *
 * Prepared once, so PostgreSQL may use a generic plan for it: each read is its own subquery with
 * an equality on the phase, for which stat_rollup_phase is the index the planner picks without
 * the parameters' values (stats-rollup-phase.pg.test.ts checks it from the indexes' statistics
 * after twelve runs).
 *
 * JIT is off on the store's connections (client.ts): the planner priced a year of Kolkata days
 * far above jit_above_cost, and compiling took 50 to 140 ms for a statement that runs in a few.
 */
import type { GrainPhases } from '../../domain/stat-phases.js';
import type { FineGrain, RollupRead } from '../../domain/stat-levels.js';
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
export interface RollupReads {
  coarse: RollupRead | null;
  marks: readonly number[];
  buckets: number;
  /** The finer pieces at the edges, by grain. */
  fine: Record<FineGrain, GrainPhases>;
}

type SumRow = StatCounters & { i: number; mt: 0 | 1 };

const NO_PHASES: GrainPhases = { reads: [], froms: [], tos: [], edges: [], signs: [] };
export const NO_FINE: Record<FineGrain, GrainPhases> = { s: NO_PHASES, h: NO_PHASES, q: NO_PHASES };

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

/**
 * Each grain's phase as its index has it, word for word: stat_rollup_phase's expression
 * (migration 5) for quarter hours and hours; stat_rollup_phase_six's (migration 7), an index of
 * six-hour records alone, for six hours.
 */
const PHASE_OF_FINER = `((s.bucket * CASE s.grain WHEN 'q' THEN 1 WHEN 'h' THEN 4 ELSE 96 END) % 96)`;
const PHASE: Record<FineGrain, string> = { q: PHASE_OF_FINER, h: PHASE_OF_FINER, s: `((s.bucket * 24) % 96)` };

/**
 * The finer records of one grain, each with the edge of its piece and its weight (scope sign
 * times piece sign). `grain` is one of three constants, written into the text so that each branch
 * names its grain (and so its index) to the planner.
 */
function finerRecords(db: Db, q: CounterScope, grain: FineGrain, g: GrainPhases) {
  return db`
    SELECT (${g.edges}::int4[])[p.j] AS edge, c.sign * (${g.signs}::int4[])[p.j] AS w, ${db.unsafe(MT)} AS mt,
      s.sent, s.delivered, s.opened, s.clicked, s.bounced, s.unsubscribed, s.complained
    FROM c
    CROSS JOIN unnest(${g.reads.map((r) => r.phase)}::int8[], ${g.reads.map((r) => r.from)}::int8[], ${g.reads.map((r) => r.to)}::int8[]) AS r(phase, lo, hi)
    CROSS JOIN LATERAL (
      SELECT * FROM stat_rollup s
      WHERE s.account_id = ${q.accountId} AND s.channel_id = c.channel_id AND s.grain = ${db.unsafe(`'${grain}'`)}
        AND ${db.unsafe(PHASE[grain])} = r.phase
        AND s.bucket BETWEEN r.lo AND r.hi
      -- OFFSET 0 keeps this a subquery run per (channel, phase), one index range scan each.
      OFFSET 0
    ) s
    CROSS JOIN LATERAL (SELECT width_bucket(s.bucket, ${g.froms}::int8[]) AS j) p
    WHERE p.j > 0 AND s.bucket <= (${g.tos}::int8[])[p.j]`;
}

/**
 * A record's mail type as 0 (transactional) or 1 (broadcast): the statement groups by integers,
 * which PostgreSQL sorts several times faster than text (a year of Kolkata days groups about
 * 5,000 finer records by edge: a third of the statement when the key was text).
 */
const MT = `(s.mail_type = 'broadcast')::int4`;
const MAIL_TYPES: readonly MailType[] = ['transactional', 'broadcast'];

const COUNTERS = ['sent', 'delivered', 'opened', 'clicked', 'bounced', 'unsubscribed', 'complained'];
/**
 * The counters summed with weight `w`, as float8: sum(int8) accumulates in numeric, and a year of
 * Kolkata days sums about 56,000 values (7 counters of some 8,000 rows). A float8 sum of integers
 * is exact while every partial sum stays below 2^53 (9·10^15 events), and it was 7 to 15% of the
 * statement here (bench/stats-series.mjs, PostgreSQL, 2026-12-06).
 */
const SUMS = (w: string) => COUNTERS.map((n) => `sum((${w} * ${n})::float8)::int8 AS ${n}`).join(', ');
/** The counters of x summed back to int8. */
const TOTALS = COUNTERS.map((n) => `sum(x.${n}::float8)::int8 AS ${n}`).join(', ');

/**
 * The coarse records summed per bucket of the answer (and scope sign). Between the first and the
 * last mark every record falls in a bucket of the answer; the bound is kept for safety.
 */
function coarseSums(db: Db, q: CounterScope, p: RollupReads) {
  const coarse = p.coarse ?? { grain: 'd', from: 0, to: -1 };
  return db`
    SELECT k.i, ${db.unsafe(MT)} AS mt, ${db.unsafe(SUMS('c.sign'))}
    FROM c CROSS JOIN LATERAL (
      SELECT * FROM stat_rollup s
      WHERE s.account_id = ${q.accountId} AND s.channel_id = c.channel_id AND s.grain = ${coarse.grain}::"char" AND s.bucket BETWEEN ${coarse.from} AND ${coarse.to}
      OFFSET 0
    ) s
    CROSS JOIN LATERAL (SELECT width_bucket(s.bucket, ${p.marks as number[]}::int8[]) - 1 AS i) k
    WHERE k.i >= 0 AND k.i < ${p.buckets}::int4
    GROUP BY 1, 2`;
}

/** The coarse sums and ±W(e) of the finer records, per bucket: W(e) counts in the bucket starting at e, and with the other sign in the one before it. */
function withEdges(db: Db, q: CounterScope, p: RollupReads) {
  return db<SumRow[]>`
    WITH c AS (${scopeOf(db, q)}),
    w AS (
      SELECT f.edge, f.mt, ${db.unsafe(SUMS('f.w'))}
      FROM (${finerRecords(db, q, 's', p.fine.s)} UNION ALL ${finerRecords(db, q, 'h', p.fine.h)} UNION ALL ${finerRecords(db, q, 'q', p.fine.q)}) f
      GROUP BY f.edge, f.mt
    )
    SELECT x.i, x.mt, ${db.unsafe(TOTALS)}
    FROM (
      ${coarseSums(db, q, p)}
      UNION ALL SELECT edge, mt, sent, delivered, opened, clicked, bounced, unsubscribed, complained FROM w
      UNION ALL SELECT edge - 1, mt, -sent, -delivered, -opened, -clicked, -bounced, -unsubscribed, -complained FROM w
    ) x
    WHERE x.i >= 0 AND x.i < ${p.buckets}::int4
    GROUP BY x.i, x.mt`;
}

/** Only coarse records (UTC series, totals): no edge terms. */
function coarseOnly(db: Db, q: CounterScope, p: RollupReads) {
  return db<SumRow[]>`WITH c AS (${scopeOf(db, q)}) ${coarseSums(db, q, p)}`;
}

export async function rollupBucketSums(sql: Sql, q: CounterScope, p: RollupReads): Promise<BucketSum[]> {
  const edges = p.fine.s.reads.length > 0 || p.fine.h.reads.length > 0 || p.fine.q.reads.length > 0;
  if (p.buckets === 0 || (!p.coarse && !edges)) return [];
  const rows = await (edges ? withEdges(sql, q, p) : coarseOnly(sql, q, p));
  return rows.map((r) => ({
    i: r.i,
    mailType: MAIL_TYPES[r.mt]!,
    value: { sent: r.sent, delivered: r.delivered, opened: r.opened, clicked: r.clicked, bounced: r.bounced, unsubscribed: r.unsubscribed, complained: r.complained },
  }));
}
