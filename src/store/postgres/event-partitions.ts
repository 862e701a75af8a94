/**
 * The range partitions of the event log (events and event_terms, PARTITION BY RANGE (seq):
 * schema/events-stats.ts says why): the next one is added ahead of the head, and those wholly
 * below retention's floor are dropped.
 *
 * Ahead: when head.last + half the width of the newest partition reaches its upper bound, the
 * next partition [hi, hi + width) is added, width about one day of the recent event volume (the
 * seqs the event clock shows for the last 24 h), so retention of N days keeps about N + 1 of them.
 * The engine does it at start and every minute (engine.ts); the copy into PostgreSQL before it
 * writes a batch of events (coverSeqs). If appends outran it, their rows are in the DEFAULT
 * partition (they never fail) and the next partition starts above them.
 *
 * Locks. A partition is created standalone then ATTACHed: ATTACH takes SHARE UPDATE EXCLUSIVE on
 * the parent, which no append or read conflicts with, where CREATE TABLE ... PARTITION OF takes
 * ACCESS EXCLUSIVE on it (every appender would queue behind it). ATTACH does take ACCESS
 * EXCLUSIVE on the DEFAULT partition (it proves no row there belongs to the new range): readers
 * touch it, appenders only when they land there. DROP takes ACCESS EXCLUSIVE on the parent.
 * Every DDL transaction runs with a short lock_timeout: while it waits for a long reader, the
 * statements behind it wait too, so it gives up after DDL_LOCK_TIMEOUT_MS and is tried again
 * at the next run (a minute later, or the next retention sweep). Each table is maintained in its
 * own transaction, so a DDL never holds a lock of one table while it waits for the other's (a
 * reader of both could otherwise close a lock cycle with it).
 *
 * Several nodes at once: a transaction-scoped advisory lock per table (its own key class), and
 * every decision is taken again under it, so two runs racing add one partition.
 */
import { ident, type Db, type Sql, type Tx } from './client.js';

export const PARTITIONED_TABLES = ['events', 'event_terms'] as const;
export type PartitionedTable = (typeof PARTITIONED_TABLES)[number];

/** The advisory lock class of partition maintenance (two-int4 keys; the sweep has "RETN"). */
const PARTITION_LOCK_CLASS = 0x5041_5254; // "PART"
const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

export interface PartitionSizing {
  /** Seqs of a new partition at least (a quiet log) and at most (a burst). */
  minWidth: number;
  maxWidth: number;
  /** How long a DDL waits for a lock before it gives up until the next run. */
  lockTimeoutMs: number;
}

export const PARTITION_SIZING: PartitionSizing = { minWidth: 65_536, maxWidth: 64 * 1024 * 1024, lockTimeoutMs: 1_000 };

export interface SeqRange {
  name: string;
  lo: number;
  /** Exclusive. */
  hi: number;
}

/** The table's range partitions, lowest first (the DEFAULT one apart). */
export async function rangePartitions(db: Db, table: PartitionedTable): Promise<SeqRange[]> {
  const rows = await db<{ name: string; bound: string }[]>`
    SELECT c.relname::text AS name, pg_get_expr(c.relpartbound, c.oid) AS bound
    FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
    WHERE i.inhparent = ${table}::regclass`;
  const out: SeqRange[] = [];
  for (const r of rows) {
    const m = /FROM \('?(-?\d+)'?\) TO \('?(-?\d+)'?\)/.exec(r.bound);
    if (m) out.push({ name: r.name, lo: Number(m[1]), hi: Number(m[2]) });
  }
  return out.sort((a, b) => a.lo - b.lo);
}

/**
 * Seqs per day at `count` seqs over `spanMs`, in the sizing's bounds. Never extrapolated from less
 * than `minSpanMs` (an hour by default): a burst in a young log would otherwise size a huge one.
 */
export function dayWidth(count: number, spanMs: number, s: PartitionSizing, minSpanMs = HOUR_MS): number {
  const perDay = Math.ceil((count * DAY_MS) / Math.max(spanMs, minSpanMs));
  return Math.min(s.maxWidth, Math.max(s.minWidth, perDay));
}

/** The head and the width of a new partition: the seqs appended over the last 24 h of the event clock. */
async function headAndWidth(db: Db, s: PartitionSizing): Promise<{ last: number; width: number }> {
  const [r] = await db<{ last: number; clock_ms: number | null; day_seq: number | null; day_ms: number | null }[]>`
    SELECT h.last, h.clock_ms, d.seq AS day_seq, d.clock_ms AS day_ms
    FROM event_log_head h LEFT JOIN LATERAL (
      SELECT seq, clock_ms FROM event_clock WHERE clock_ms >= h.clock_ms - ${DAY_MS}::int8 ORDER BY clock_ms LIMIT 1) d ON true`;
  if (r.clock_ms === null || r.day_seq === null || r.day_ms === null) return { last: r.last, width: s.minWidth };
  return { last: r.last, width: dayWidth(r.last - r.day_seq + 1, r.clock_ms - r.day_ms, s) };
}

/** One table's maintenance transaction: its advisory lock, DDL that gives up rather than queue. */
function maintenanceTx<T>(sql: Sql, table: PartitionedTable, s: PartitionSizing, fn: (tx: Tx) => Promise<T>): Promise<T> {
  return sql.begin(async (tx) => {
    await tx.unsafe(`SET LOCAL lock_timeout = ${Math.max(1, Math.floor(s.lockTimeoutMs))}`);
    await tx`SELECT pg_advisory_xact_lock(${PARTITION_LOCK_CLASS}::int4, ${PARTITIONED_TABLES.indexOf(table)}::int4)`;
    return fn(tx);
  }) as Promise<T>;
}

/**
 * Adds [lo, hi) to the table. Its DEFAULT partition is locked first, so no row lands there
 * meanwhile; `lo` is raised above every row already there (ATTACH would refuse the range).
 */
async function addPartition(tx: Tx, table: PartitionedTable, lo: number, width: number): Promise<SeqRange> {
  await tx.unsafe(`LOCK TABLE ${ident(`${table}_default`)} IN ACCESS EXCLUSIVE MODE`);
  const [{ max }] = await tx.unsafe<{ max: number | null }[]>(`SELECT max(seq) AS max FROM ${ident(`${table}_default`)}`);
  const from = Math.max(lo, (max ?? 0) + 1);
  const range = { name: `${table}_p${from}`, lo: from, hi: from + width };
  await tx.unsafe(`CREATE TABLE IF NOT EXISTS ${ident(range.name)} (LIKE ${ident(table)} INCLUDING DEFAULTS INCLUDING CONSTRAINTS)`);
  await tx.unsafe(`ALTER TABLE ${ident(table)} ATTACH PARTITION ${ident(range.name)} FOR VALUES FROM (${range.lo}) TO (${range.hi})`);
  return range;
}

/**
 * The next partition of one table when the head is within half the newest partition's width
 * of its end; null when none is due. Appends already past the end (maintenance lagged) go on
 * while this runs: the new partition then starts a slack above the head, so that none of them
 * is routed to the DEFAULT partition with a seq the new range claims.
 */
async function ensureAhead(sql: Sql, table: PartitionedTable, s: PartitionSizing): Promise<SeqRange | null> {
  return maintenanceTx(sql, table, s, async (tx) => {
    const top = (await rangePartitions(tx, table)).at(-1);
    const { last, width } = await headAndWidth(tx, s);
    if (top && last + Math.floor((top.hi - top.lo) / 2) < top.hi) return null;
    const slack = Math.max(1, Math.floor(width / 64));
    const hi = top?.hi ?? 1;
    return addPartition(tx, table, last + slack >= hi ? last + 1 + slack : hi, width);
  });
}

/** Partition maintenance ahead of the head, for both tables; the ranges added. */
export async function ensurePartitionsAhead(sql: Sql, s: PartitionSizing = PARTITION_SIZING): Promise<SeqRange[]> {
  const added: SeqRange[] = [];
  for (const table of PARTITIONED_TABLES) {
    const r = await ensureAhead(sql, table, s);
    if (r) added.push(r);
  }
  return added;
}

/**
 * Every range partition whose upper bound is at or below the floor: all its rows are below it,
 * no reader sees them (each bounds seq >= floor). One transaction per table; a lock timeout
 * leaves them to the next sweep. The names dropped.
 */
export async function dropPartitionsBelowFloor(sql: Sql, s: PartitionSizing = PARTITION_SIZING): Promise<string[]> {
  const dropped: string[] = [];
  for (const table of PARTITIONED_TABLES) {
    const gone = await maintenanceTx(sql, table, s, async (tx) => {
      const [{ floor }] = await tx<{ floor: number }[]>`SELECT floor FROM event_log_floor`;
      const below = (await rangePartitions(tx, table)).filter((r) => r.hi <= floor);
      for (const r of below) await tx.unsafe(`DROP TABLE ${ident(r.name)}`);
      return below.map((r) => r.name);
    }).catch((err: unknown) => {
      if (isLockTimeout(err)) return [];
      throw err;
    });
    dropped.push(...gone);
  }
  return dropped;
}

/** PostgreSQL's lock_not_available (55P03): lock_timeout expired. */
export function isLockTimeout(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === '55P03';
}

/**
 * The copy into PostgreSQL (import/events.ts): partitions up to seq `to` before a batch [from, to]
 * is written, each `width` wide, the first at `from` when the log starts above the last
 * partition (the copied log's floor). Inside the batch's transaction: no node serves the schema
 * during a copy.
 */
export async function coverSeqs(tx: Tx, o: { from: number; to: number; width: number }): Promise<void> {
  for (const table of PARTITIONED_TABLES) {
    let hi = (await rangePartitions(tx, table)).at(-1)?.hi ?? 1;
    while (hi <= o.to) hi = (await addPartition(tx, table, Math.max(hi, o.from), o.width)).hi;
  }
}
