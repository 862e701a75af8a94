/**
 * The PostgreSQL engine's side of `postrider store copy-to-postgres` (issue 32): writes the
 * transfer records of another engine's store (store/port/transfer.ts) into this engine's schema,
 * one transaction per batch of ~1,000 records (a big store is never one giant transaction), and
 * counts what the schema holds for the copy's check.
 *
 * Restartable by refusal: the CLI writes only into a schema that holds nothing (holdsData), so a
 * copy that failed half way is started again on a dropped schema, never merged into. The event
 * log's head is the last record written: until then the schema's seqs stand at 0.
 */
import type { TransferBatch, TransferRecords, TransferTarget } from '../../port/transfer.js';
import { pgContextOf, type PostgresStore } from '../engine.js';
import { countRows, tablesWithData } from './counts.js';
import { WRITERS } from './writers.js';

/** The target over a started store (its migrations applied by start()). */
export function postgresImport(store: PostgresStore): TransferTarget {
  const ctx = pgContextOf(store);
  return {
    holdsData: () => tablesWithData(ctx.sql),
    async write(batch: TransferBatch): Promise<void> {
      const write = WRITERS[batch.kind] as (tx: Parameters<(typeof WRITERS)['accounts']>[0], records: TransferRecords[typeof batch.kind][]) => Promise<void>;
      await ctx.begin((tx) => write(tx, batch.records));
    },
    counts: () => countRows(ctx.sql),
  };
}
