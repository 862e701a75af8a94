/**
 * MessagesPort.endUnfinished, as the LMDB engine's signing.ts endUnfinished: a message that
 * cannot be finished ends in one transaction: its waiting entry goes, each queued job ends with a
 * permanent bounced event per recipient (no suppression: the address is not at fault), the
 * message is sent once no job is left, and a broadcast's message becomes its entry's failure row.
 *
 * Exactly one caller ends it, across nodes: the waiting row's DELETE … RETURNING decides (a
 * racing caller waits for the row lock, then finds it gone and returns no recipient).
 */
import { definedOnly } from '../../domain/defined.js';
import type { DeliveryJob, EventRecord, MessageRecord } from '../../domain/types.js';
import type { FailedEntry, UnfinishedFailure } from '../port/messages.js';
import type { Tx } from './client.js';
import type { PgContext } from './context.js';
import { lockBroadcast, putBroadcast } from './broadcast-rows.js';
import { putFailures } from './broadcast-progress.js';
import { isChannelDeleted } from './channels-tx.js';
import { appendEvents } from './event-log.js';
import { bumpBroadcastCounters, closeMessageJobs } from './messages-tx.js';
import { finishQueuedJobs, lockJobsOfMessage } from './queue-tx.js';

export interface EndUnfinished {
  messageId: string;
  failure: UnfinishedFailure;
  failedEntry?: FailedEntry;
  now?: Date;
}

export async function endUnfinished(ctx: PgContext, q: EndUnfinished): Promise<string[]> {
  const now = q.now ?? new Date();
  return ctx.begin(async (tx) => {
    const gone = await tx`DELETE FROM unfinished_messages WHERE message_id = ${q.messageId} RETURNING 1`;
    if (gone.length === 0) return [];
    const [row] = await tx<{ doc: MessageRecord }[]>`SELECT doc FROM messages WHERE id = ${q.messageId}`;
    const message = row?.doc;
    // A deleted channel's message just stops waiting: no event is added for it.
    if (!message || (await isChannelDeleted(tx, message.channelId))) return [];
    // The broadcast's row before the jobs and the record: the order every writer of a broadcast's messages locks in.
    const broadcast = q.failedEntry && message.broadcastId ? await lockBroadcast(tx, message.broadcastId) : undefined;
    const jobs = await lockJobsOfMessage(tx, q.messageId);
    const ended = await finishQueuedJobs(tx, jobs.filter((j) => j.state === 'queued').map((j) => j.id));
    await closeMessageJobs(tx, [{ messageId: q.messageId, jobs: ended.length, at: now.toISOString() }]);
    // A message without jobs (sandbox: its outcomes were simulated at the commit) bounces every recipient.
    const bounced = jobs.length === 0 ? [...message.recipients] : ended.flatMap((j: DeliveryJob) => j.recipients);
    if (bounced.length > 0 && broadcast && q.failedEntry) await failComposedEntry(tx, broadcast, message, q.failedEntry);
    await appendEvents(tx, bouncedEvents(message, bounced, q.failure, now));
    return bounced;
  });
}

/**
 * The broadcast's entry becomes a failure row, as one that failed before the commit does, and
 * counts as failed instead of as a message; ending the message counted it as finished, which is
 * taken back (store/lmdb/broadcasts.ts failComposedEntryInTxn).
 */
async function failComposedEntry(tx: Tx, b: NonNullable<Awaited<ReturnType<typeof lockBroadcast>>>, m: MessageRecord, f: FailedEntry): Promise<void> {
  await putFailures(tx, b, [{ index: f.index, to: m.to, cc: m.cc, bcc: m.bcc, code: f.code, message: f.message }]);
  await putBroadcast(tx, { ...b, messages: b.messages - 1, failed: (b.failed ?? 0) + 1 });
  await bumpBroadcastCounters(tx, b.id, { finished: -1 });
}

/** One bounced event per recipient, as delivery records a hard bounce; the reason is also the response (no server answered). */
function bouncedEvents(m: MessageRecord, recipients: readonly string[], f: UnfinishedFailure, now: Date): Omit<EventRecord, 'seq'>[] {
  const response = `The message could not be composed: ${f.reason}`;
  return recipients.map((r) => ({
    accountId: m.accountId,
    channelId: m.channelId,
    messageId: m.id,
    mailType: m.mailType,
    mailSource: m.mailSource,
    eventType: 'bounced',
    timestamp: now.toISOString(),
    subject: m.subject,
    recipients: [r],
    tags: m.tags,
    metadata: m.metadata,
    details: definedOnly({ bounceType: 'hard', category: f.category, enhancedCode: f.enhancedCode, response, reason: response }),
  }));
}
