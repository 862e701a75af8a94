/**
 * The statistics change marks of the PostgreSQL engine (domain/stat-changes.ts; table
 * stat_changes, migration 6), moved on inside the transaction that changes the counters: every
 * node reads them before it trusts the sums of closed buckets it keeps (statistics/series-cache.ts),
 * so a change made through any node reaches every node's next read.
 */
import { MAX_CHANGE_MARKS, NO_CHANGES, type StatChanges } from '../../domain/stat-changes.js';
import type { Db, Tx } from './client.js';

export async function statChanges(db: Db, accountId: string): Promise<StatChanges> {
  const [row] = await db<{ epoch: number; quarters: number[] }[]>`SELECT epoch::float8 AS epoch, quarters::float8[] AS quarters FROM stat_changes WHERE account_id = ${accountId}`;
  return row ? { epoch: row.epoch, quarters: row.quarters } : NO_CHANGES;
}

/**
 * Inside a write: each account's counters changed from its quarter hour on (0: every bucket).
 * `x = x + 1` under the row's lock, so concurrent writers (an append and a channel's delete)
 * each move the epoch once; the array keeps its last MAX_CHANGE_MARKS entries.
 */
export async function noteStatChanges(tx: Tx, changes: ReadonlyMap<string, number>): Promise<void> {
  if (changes.size === 0) return;
  await tx`
    INSERT INTO stat_changes (account_id, epoch, quarters)
    SELECT a, 1, ARRAY[q] FROM unnest(${[...changes.keys()]}::text[], ${[...changes.values()]}::int8[]) AS u(a, q)
    ON CONFLICT (account_id) DO UPDATE SET
      epoch = stat_changes.epoch + 1,
      quarters = (stat_changes.quarters || EXCLUDED.quarters)[greatest(1, cardinality(stat_changes.quarters) + 2 - ${MAX_CHANGE_MARKS}::int4):]`;
}
