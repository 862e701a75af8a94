/**
 * MessagesPort.commit: one submission in one transaction, durable when it resolves (synchronous
 * commit), as the LMDB engine's messages.ts commitMessages: the messages with their bodies,
 * client Message-ID entries and waiting entries, their jobs (queue-tx.ts), the pending account's
 * send quota, a broadcast batch's progress, the idempotency record, sandbox's suppressions and,
 * last, the events (event-log.ts appendEvents holds the event log's lock until COMMIT, so it
 * goes after every other write) with the live messages' place in the message list's queue.
 *
 * Atomic across nodes: each rule is checked where it is written and throws before COMMIT, so the
 * whole transaction rolls back and nothing of the submission stays: the broadcast's row is locked
 * and checked first (broadcast-progress.ts), the quota is a conditional upsert (send-quota.ts),
 * the idempotency key an insert-if-absent (webhooks-tx.ts).
 */
import type { BroadcastRecord } from '../port/broadcasts.js';
import type { SubmissionCommit } from '../port/messages.js';
import type { Tx } from './client.js';
import type { PgContext } from './context.js';
import { advanceBroadcast, lockBroadcastForBatch } from './broadcast-progress.js';
import { appendEvents, queueMessages } from './event-log.js';
import { insertMessages } from './message-rows.js';
import { insertJobs } from './queue-tx.js';
import { reserveSendQuota } from './send-quota.js';
import { planSubmission } from './submission-plan.js';
import { addSuppressions } from './suppressions-tx.js';
import { putIdempotency } from './webhooks-tx.js';

export async function commitSubmission(ctx: PgContext, input: SubmissionCommit): Promise<void> {
  const now = input.now ?? new Date();
  // Computed once, outside the transaction (a retry after a serialization failure reuses it).
  const plan = planSubmission(input.messages, now);
  if (plan.stored.length === 0 && !input.broadcastProgress && !input.idempotency) return;
  await ctx.begin(async (tx) => {
    const broadcast = input.broadcastProgress ? await lockBroadcastForBatch(tx, input.broadcastProgress) : undefined;
    if (input.sendLimit) {
      const wanted = input.messages.reduce((n, m) => n + m.record.recipients.length, 0);
      await reserveSendQuota(tx, input.sendLimit.accountId, wanted, input.sendLimit.limit);
    }
    await Promise.all([insertMessages(tx, plan.stored), insertJobs(tx, plan.jobs)]);
    if (broadcast) await recordProgress(tx, broadcast, input);
    if (input.idempotency) await putIdempotency(tx, input.idempotency);
    await addSuppressions(tx, plan.suppressions, now);
    const events = await appendEvents(tx, plan.events);
    const live = new Set(plan.stored.filter((s) => s.record.deliveryType === 'live').map((s) => s.record.id));
    await queueMessages(tx, events.filter((e) => e.eventType === 'accepted' && live.has(e.messageId)));
  });
}

async function recordProgress(tx: Tx, b: BroadcastRecord, input: SubmissionCommit): Promise<void> {
  await advanceBroadcast(tx, b, input.broadcastProgress!, {
    messages: input.messages.length,
    // Sandbox messages are sent at the commit: they leave the queue at once.
    finished: input.messages.filter((m) => m.record.deliveryType === 'sandbox').length,
  });
}
