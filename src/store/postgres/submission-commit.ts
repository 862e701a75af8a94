/**
 * MessagesPort.commit: a submission committed durably when it resolves (synchronous commit), as
 * the LMDB engine's messages.ts commitMessages: the messages with their bodies, client Message-ID
 * entries and waiting entries, their jobs (queue-tx.ts), the pending account's send quota, a
 * broadcast batch's progress, the idempotency record, sandbox's suppressions and, last, the
 * events (event-log.ts appendEvents holds the event log's lock until COMMIT, so it goes after
 * every other write) with the live messages' place in the message list's queue.
 *
 * Concurrent submissions share one transaction and one flush (submission-group.ts): the event
 * log's lock serializes every appending transaction until its COMMIT is on disk, so one
 * transaction per request would cap a node, and the cluster, at one flush per request. Each
 * submission's rules run in a savepoint, so one that breaks a rule rolls back alone; the rows of
 * all that passed are written together (one INSERT per table per batch).
 *
 * Atomic across nodes: each rule is checked where it is written and throws before COMMIT, so the
 * submission's writes roll back and nothing of it stays: the broadcast's row is locked and
 * checked first (broadcast-progress.ts), the quota is a conditional upsert (send-quota.ts), the
 * idempotency key an insert-if-absent (webhooks-tx.ts).
 */
import type { EventRecord } from '../../domain/types.js';
import type { BroadcastRecord } from '../port/broadcasts.js';
import type { SubmissionCommit } from '../port/messages.js';
import type { Tx } from './client.js';
import type { PgContext } from './context.js';
import { advanceBroadcast, lockBroadcastForBatch } from './broadcast-progress.js';
import { appendEvents, queueMessages } from './event-log.js';
import { insertMessages } from './message-rows.js';
import { insertJobs } from './queue-tx.js';
import { reserveSendQuota } from './send-quota.js';
import { planSubmission, type SubmissionPlan } from './submission-plan.js';
import { simulatedAtCommit } from '../../domain/sandbox-outcome.js';
import { addSuppressions } from './suppressions-tx.js';
import { putIdempotency } from './webhooks-tx.js';

/** A submission planned outside the transaction (a retry after a serialization failure reuses it). */
export interface PlannedSubmission {
  input: SubmissionCommit;
  plan: SubmissionPlan;
  now: Date;
}

/** Its events, to append once the batch's writes are done, and which of its messages wait in the queue. */
export interface WrittenSubmission {
  events: SubmissionPlan['events'];
  queued: Set<string>;
}

export function planCommit(input: SubmissionCommit): PlannedSubmission | undefined {
  const now = input.now ?? new Date();
  const plan = planSubmission(input.messages, now);
  if (plan.stored.length === 0 && !input.broadcastProgress && !input.idempotency) return undefined;
  return { input, plan, now };
}

/** One submission alone in its own transaction (a background writer: a broadcast's expansion). */
export async function commitAlone(ctx: PgContext, s: PlannedSubmission): Promise<void> {
  await ctx.begin(async (tx) => {
    await checkRules(tx, s);
    await appendWritten(tx, await writeRows(tx, [s]));
  });
}

/** Whether the submission has a rule that may refuse it (a batch runs those in a savepoint of its own). */
export function hasRules({ input }: PlannedSubmission): boolean {
  return input.broadcastProgress !== undefined || input.sendLimit !== undefined || input.idempotency !== undefined;
}

/**
 * What may refuse one submission, each rule checked where it is written (see the header): the
 * broadcast's row locked and its cursor moved, the send quota, the idempotency key. Nothing else
 * of a submission can fail on its own: its rows have fresh ids.
 */
export async function checkRules(tx: Tx, { input, now }: PlannedSubmission): Promise<void> {
  const broadcast = input.broadcastProgress ? await lockBroadcastForBatch(tx, input.broadcastProgress) : undefined;
  if (input.sendLimit) {
    const wanted = input.messages.reduce((n, m) => n + m.record.recipients.length, 0);
    await reserveSendQuota(tx, input.sendLimit.accountId, wanted, input.sendLimit.limit);
  }
  if (broadcast) await recordProgress(tx, broadcast, input, now);
  if (input.idempotency) await putIdempotency(tx, input.idempotency);
}

/**
 * The rows of submissions whose rules passed, one statement per table for all of them (a batch
 * of 64 sends writes its messages in one INSERT, not 64), and sandbox's suppressions.
 */
export async function writeRows(tx: Tx, subs: readonly PlannedSubmission[]): Promise<WrittenSubmission[]> {
  await Promise.all([insertMessages(tx, subs.flatMap((s) => s.plan.stored)), insertJobs(tx, subs.flatMap((s) => s.plan.jobs))]);
  for (const s of subs) if (s.plan.suppressions.length > 0) await addSuppressions(tx, s.plan.suppressions, s.now);
  // Live messages and sandbox ones scheduled for later wait in the queue (submission-plan.ts).
  return subs.map(({ plan }) => ({ events: plan.events, queued: new Set(plan.stored.filter((m) => m.record.status === 'queued').map((m) => m.record.id)) }));
}

/** The events of written submissions, in their order, in one append (one turn of the log's lock). */
export async function appendWritten(tx: Tx, written: readonly WrittenSubmission[]): Promise<void> {
  const events: EventRecord[] = await appendEvents(tx, written.flatMap((w) => w.events));
  const queued = new Set(written.flatMap((w) => [...w.queued]));
  await queueMessages(tx, events.filter((e) => e.eventType === 'accepted' && queued.has(e.messageId)));
}

async function recordProgress(tx: Tx, b: BroadcastRecord, input: SubmissionCommit, now: Date): Promise<void> {
  await advanceBroadcast(tx, b, input.broadcastProgress!, {
    messages: input.messages.length,
    // Sandbox messages sent now get their outcomes at the commit: they leave the queue at once.
    finished: input.messages.filter((m) => simulatedAtCommit(m.record, now.getTime())).length,
  });
}
