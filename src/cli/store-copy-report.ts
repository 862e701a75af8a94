/**
 * The two halves of `store copy-to-postgres` that talk to the operator: the copy loop with its
 * progress lines (stderr, at most one a second, so a long copy shows it is moving without
 * flooding a terminal or a journal), and the closing check: a table of every kind counted in
 * LMDB and in PostgreSQL, and the exit code.
 */
import type { TransferCountName, TransferCounts, TransferSource, TransferTarget } from '../store/port/transfer.js';
import { table, type CommandIo } from './args.js';

const PROGRESS_EVERY_MS = 1_000;

const fmt = (n: number): string => n.toLocaleString('en-US');

/**
 * Writes every batch; returns how many records. One write is in flight while the next batch is
 * read: LMDB reads are synchronous, so reading overlaps PostgreSQL's round trip and commit.
 */
export async function copyBatches(source: TransferSource, target: TransferTarget, io: CommandIo, now: () => number = Date.now): Promise<number> {
  const sizes = source.sizes();
  const done = new Map<string, number>();
  let total = 0;
  let printed = now();
  let pending: Promise<void> = Promise.resolve();
  try {
    for await (const batch of source.batches()) {
      await pending;
      pending = target.write(batch);
      const n = (done.get(batch.kind) ?? 0) + batch.records.length;
      done.set(batch.kind, n);
      total += batch.records.length;
      if (now() - printed >= PROGRESS_EVERY_MS) {
        const size = sizes[batch.kind];
        io.err(`copying ${batch.kind}: ${fmt(n)}${size === undefined ? '' : ` / ${fmt(size)}`}`);
        printed = now();
      }
    }
  } finally {
    // The last write settles before the stores close (and its error, if any, is the one thrown).
    await pending;
  }
  return total;
}

/** Prints the table (stdout) and returns 0 when every count agrees, else 1 with the kinds that differ (stderr). */
export function reportCounts(lmdb: TransferCounts, postgres: TransferCounts, io: CommandIo, to: { schema: string; url: string }): number {
  const where = `schema ${to.schema} of ${to.url}`;
  const names = Object.keys(lmdb) as TransferCountName[];
  const differ = names.filter((n) => lmdb[n] !== postgres[n]);
  const rows = names.map((n) => ({ kind: n, lmdb: fmt(lmdb[n]), postgresql: fmt(postgres[n]), check: lmdb[n] === postgres[n] ? 'ok' : 'DIFFERS' }));
  io.out(table(rows, ['kind', 'lmdb', 'postgresql', 'check']));
  if (differ.length > 0) {
    io.err(`postrider: the copy in ${where} differs from the LMDB store in: ${differ.join(', ')}; keep running on LMDB, and see docs/operations.md "Moving to PostgreSQL"`);
    return 1;
  }
  io.out(`every count matches. Next: set store.postgresUrl to ${to.url} and store.postgresSchema to ${to.schema} in the configuration, and start the daemon`);
  return 0;
}
