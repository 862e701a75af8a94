/**
 * One account's part of the delivery queue (GET /queue, /queue/messages and the retry and drop
 * of one message's jobs through the API). The jobs themselves have no account index; the
 * account's queued messages do: `messageQueue` ([accountId, acceptedSeq], layout.ts) holds every
 * message of the account with a delivery job not yet finished, oldest first. So a walk reads
 * that index from a seq on, and per message its accepted event (id, channel, subject,
 * recipients: much smaller than the record, which holds the bodies) and its jobs
 * (`messageJobs`). The walk stops at `scanLimit` messages, so a request costs the same with a
 * million messages queued as with a thousand; the caller says so in its answer.
 *
 * A message committed but not yet composed and signed (its entry in `unsigned`, store/signing.ts)
 * has its jobs queued but outside jobsDue until the finishing stage stores its signed body: each
 * walked message says so (`preparing`), one existence check (no decode) per message.
 *
 * The writes apply the operator's verbs (queue.ts retryJobInTxn, queue-outcome.ts dropJobInTxn)
 * to the jobs of one message, in one write.
 */
import type { DeliveryJob } from '../../domain/types.js';
import type { MessageJobsOutcome, QueuedMessage, QueueWalk, QueueWalkResult } from '../port/queue.js';
import { dbsOf } from './databases.js';
import type { Store } from './env.js';
import { getEvent } from './events.js';
import { KEY_MAX } from './layout.js';
import { jobsOfMessage } from './message-jobs.js';
import { hiddenChannels } from './purge-queue.js';
import { dropJobInTxn } from './queue-outcome.js';
import { publicJob, retryJobInTxn } from './queue.js';
import { awaitsSignature } from './signing.js';

export type { MessageJobsOutcome, QueuedMessage, QueueWalk, QueueWalkResult } from '../port/queue.js';

/** The account's queued messages in queue order (oldest accepted first), bounded as the walk says. */
export function walkQueuedMessages(store: Store, w: QueueWalk): QueueWalkResult {
  const hidden = hiddenChannels(store, w.accountId);
  const messages: QueuedMessage[] = [];
  let scanned = 0;
  let lastSeq = w.afterSeq;
  let reachedEnd = true;
  const keys = dbsOf(store).messageQueue.getKeys({ start: [w.accountId, w.afterSeq + 1], end: [w.accountId, KEY_MAX] });
  for (const key of keys) {
    if (messages.length >= w.limit || scanned >= w.scanLimit) {
      reachedEnd = false;
      break;
    }
    const seq = (key as [string, number])[1];
    scanned++;
    lastSeq = seq;
    const found = queuedMessageAt(store, seq, w, hidden);
    if (found) messages.push(found);
  }
  return { messages, scanned, lastSeq, reachedEnd };
}

function queuedMessageAt(store: Store, seq: number, w: QueueWalk, hidden: ReadonlySet<string>): QueuedMessage | undefined {
  // Retention may have removed the accepted event of a message still queued past retention.days.
  const accepted = getEvent(store, seq);
  if (!accepted || hidden.has(accepted.channelId)) return undefined;
  if (w.channelId && accepted.channelId !== w.channelId) return undefined;
  const jobs = jobsOfMessage(store, accepted.messageId)
    .filter((j) => j.state !== 'done' && (w.domain === undefined || j.domain === w.domain))
    .map(publicJob);
  return jobs.length > 0 ? { seq, accepted, jobs, preparing: awaitsSignature(store, accepted.messageId) } : undefined;
}

/** The message's queued jobs (to `domain` when given) become due now; leased ones finish their attempt. */
export async function retryMessageJobs(store: Store, o: { messageId: string; domain?: string; nowMs: number }): Promise<MessageJobsOutcome> {
  return store.write(() => applyToJobsInTxn(store, o, matchingJobs(store, o), (job) => retryJobInTxn(store, job, o.nowMs)));
}

/**
 * The message's queued jobs (to `domain` when given) end as the CLI's drop ends them: a bounced
 * event per recipient. All or nothing: while one of them is being delivered (leased), nothing is
 * dropped, since that attempt cannot be stopped and may deliver.
 */
export async function dropMessageJobs(store: Store, o: { messageId: string; domain?: string; now: Date }): Promise<MessageJobsOutcome> {
  return store.write(() => {
    const matched = matchingJobs(store, o);
    const leased = matched.filter((j) => j.state === 'leased').length;
    if (leased > 0) return { matched: matched.length, changed: 0, leased, jobs: matched.map(publicJob), preparing: awaitsSignature(store, o.messageId) };
    return applyToJobsInTxn(store, o, matched, (job) => dropJobInTxn(store, job, o.now));
  });
}

function matchingJobs(store: Store, o: { messageId: string; domain?: string }): DeliveryJob[] {
  return jobsOfMessage(store, o.messageId).filter((j) => o.domain === undefined || j.domain === o.domain);
}

/** `verb` on each of `matched` (matchingJobs, read in this write); the jobs read again when it changed any. */
function applyToJobsInTxn(store: Store, o: { messageId: string; domain?: string }, matched: DeliveryJob[], verb: (job: DeliveryJob) => string): MessageJobsOutcome {
  let changed = 0;
  let leased = 0;
  for (const job of matched) {
    const result = verb(job);
    if (result === 'ok') changed++;
    else if (result === 'leased') leased++;
  }
  const jobs = changed > 0 ? matchingJobs(store, o) : matched;
  return { matched: matched.length, changed, leased, jobs: jobs.map(publicJob), preparing: awaitsSignature(store, o.messageId) };
}
