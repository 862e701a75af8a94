/**
 * Group commit of the submissions one node receives at once (issue 32: "concurrent sends share
 * transactions ... so that throughput is not one fsync per message"), as LMDB's Store.write
 * groups the writes of one event-loop turn.
 *
 * While a batch's transaction runs, new submissions wait; when it ends, all that waited (up to
 * MAX_BATCH) go in the next one. In that transaction each submission's rules run in a
 * savepoint: one that breaks a rule (the send quota, an idempotency conflict) rolls back alone
 * and is rejected with its own error after the COMMIT, the others commit. The rows of all that
 * passed are then written one statement per table, and their events come last, in one append, so the event log's lock (event-log.ts) is taken once per batch, for the
 * shortest time. Every submission of a batch resolves only after its durable COMMIT.
 *
 * A failure of the transaction itself (PostgreSQL out of reach, the append) rejects every
 * submission of the batch: none of them was stored. A serialization failure or deadlock runs the
 * whole batch again (PgContext.begin), each submission from its plan.
 */
import type { Tx } from './client.js';
import { isRetryable, type PgContext } from './context.js';
import { appendWritten, checkRules, hasRules, writeRows, type PlannedSubmission } from './submission-commit.js';
import { isUnavailable } from './unavailable.js';

/** Most submissions in one transaction: bounds its length (and the lock's hold) under a burst. */
const MAX_BATCH = 64;

interface Waiting {
  submission: PlannedSubmission;
  resolve: () => void;
  reject: (err: unknown) => void;
}

export class SubmissionGroup {
  private waiting: Waiting[] = [];
  private running = false;

  constructor(private readonly ctx: PgContext) {}

  commit(submission: PlannedSubmission): Promise<void> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ submission, resolve, reject });
      if (!this.running) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.running = true;
    try {
      while (this.waiting.length > 0) await this.run(this.waiting.splice(0, MAX_BATCH));
    } finally {
      this.running = false;
    }
  }

  private async run(batch: Waiting[]): Promise<void> {
    let failures: unknown[] = [];
    try {
      await this.ctx.begin(async (tx) => {
        failures = await writeAll(tx, batch);
      });
    } catch (err) {
      for (const w of batch) w.reject(err);
      return;
    }
    batch.forEach((w, i) => (failures[i] === undefined ? w.resolve() : w.reject(failures[i])));
  }
}

/**
 * Each submission's rules in its savepoint (a plain send has none and needs no savepoint), then
 * the rows of those that passed, one statement per table, then every event in one append; the
 * failures by position.
 */
async function writeAll(tx: Tx, batch: readonly Waiting[]): Promise<unknown[]> {
  const failures: unknown[] = [];
  const passed: PlannedSubmission[] = [];
  for (const w of batch) {
    try {
      if (hasRules(w.submission)) await tx.savepoint((sp) => checkRules(sp, w.submission));
      passed.push(w.submission);
      failures.push(undefined);
    } catch (err) {
      // The transaction as a whole cannot go on: let begin() retry it or every caller see it.
      if (isRetryable(err) || isUnavailable(err)) throw err;
      failures.push(err ?? new Error('submission failed'));
    }
  }
  await appendWritten(tx, await writeRows(tx, passed));
  return failures;
}
