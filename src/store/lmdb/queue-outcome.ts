/**
 * Recording what a delivery attempt did, in ONE durable transaction (DESIGN "recording an
 * outcome is one transaction elsewhere"; KumoMTA's Delivery / TransientFailure / Bounce /
 * Expiration records): the job's state, attempts and history, the next due time, the
 * `delivered` and `bounced` events, suppression of hard-bounced addresses and the message's
 * open-job count. Also the operator's drop, which ends a job the same way (a bounced event with
 * the reason), so nothing disappears silently.
 */
import { attemptEvents, deliveryEvent, dropEvents, hardBounces, outcomeLists, planAttempt } from '../../domain/attempt-outcome.js';
import type { DeliveryJob, EventRecord, MessageRecord } from '../../domain/types.js';
import { dbsOf } from './databases.js';
import type { Store } from './env.js';
import { appendEventInTxn } from './events.js';
import type { OperatorResult, RecordedOutcome, RecordOutcomeInput } from '../port/queue.js';
import { dueMs, holdsLeaseInTxn, leaseMs, putDueInTxn } from './queue.js';
import { addSuppressionInTxn } from './suppressions.js';
import { suppressibleInTxn } from './dns-failures.js';
import { dequeueMessageInTxn } from './message-query.js';
import { bumpBroadcastInTxn } from './broadcast-stats.js';
import { messageForOutcomeInTxn } from './delivery-messages.js';

export type { RecordedOutcome, RecordOutcomeInput } from '../port/queue.js';

export async function recordOutcome(store: Store, input: RecordOutcomeInput): Promise<RecordedOutcome> {
  return store.write(() => recordOutcomeInTxn(store, input));
}

/**
 * Several attempts' outcomes in one durable transaction (the dispatcher's group commit): each is
 * recorded exactly as recordOutcome would, in order; all or none are written.
 */
export async function recordOutcomes(store: Store, inputs: readonly RecordOutcomeInput[]): Promise<RecordedOutcome[]> {
  return store.write(() => inputs.map((input) => recordOutcomeInTxn(store, input)));
}

function recordOutcomeInTxn(store: Store, input: RecordOutcomeInput): RecordedOutcome {
  const { job, result } = input;
  const out: RecordedOutcome = { status: 'stale', attempt: job.attempts + 1, delivered: [], bounced: [], deferred: [], expired: [], suppressed: [] };
  // The lease is still ours exactly while its jobsLeased entry [leaseUntil, id] exists and holds
  // our generation and owner (fencing, queue.ts): every verb that ends or changes a lease removes
  // that entry in the same write, and nothing changes a leased job's record but those verbs. So
  // the record is the job as leased, and reading the entry stands for reading and decoding it.
  if (!holdsLeaseInTxn(store, job)) return out;
  dbsOf(store).jobsLeased.remove([leaseMs(job), job.id]);

  // What the attempt means is the domain's (domain/attempt-outcome.ts), shared with the other engine.
  const at = input.attemptAt.toISOString();
  const plan = planAttempt(job, result, at, input.nextDueAtMs);
  const message = messageForOutcomeInTxn(store, job.messageId);
  if (message) {
    const suppressible = suppressibleInTxn(store, { accountId: message.accountId, domain: job.domain, atMs: input.attemptAt.getTime(), bounced: plan.bounced });
    for (const e of attemptEvents(message, plan, result, at)) appendEventInTxn(store, e);
    for (const r of hardBounces(plan)) {
      if (suppressible(r) && addSuppressionInTxn(store, { channelId: message.channelId, mailType: message.mailType, email: r.recipient, reason: 'bounce' })) out.suppressed.push(r.recipient);
    }
  }

  dbsOf(store).jobs.put(job.id, plan.next);
  if (plan.requeued) {
    putDueInTxn(store, plan.next);
  } else if (message) {
    closeJobOfMessageInTxn(store, message, at);
  }
  return { ...out, ...outcomeLists(plan), status: plan.requeued ? 'requeued' : 'done' };
}

/** `postrider queue drop`: a queued job ends as bounced (reason "dropped by operator"). */
export async function dropJob(store: Store, jobId: string, now: Date = new Date()): Promise<OperatorResult> {
  return store.write(() => {
    const job = dbsOf(store).jobs.get(jobId) as DeliveryJob | undefined;
    return job ? dropJobInTxn(store, job, now) : 'not_found';
  });
}

/**
 * Inside a write: the drop of one job (the CLI's, and the API's for each job of a message). The
 * message record is read here, so several jobs of one message can be dropped in one write.
 */
export function dropJobInTxn(store: Store, job: DeliveryJob, now: Date): OperatorResult {
  // A leased job is being delivered right now; dropping it could not stop that.
  if (job.state !== 'queued') return job.state === 'leased' ? 'leased' : 'done';
  dbsOf(store).jobsDue.remove([dueMs(job), job.id]);
  dbsOf(store).jobs.put(job.id, { ...job, state: 'done' } satisfies DeliveryJob);
  const message = dbsOf(store).messages.get(job.messageId) as MessageRecord | undefined;
  if (message) {
    for (const e of dropEvents(message, job, now.toISOString())) appendEventInTxn(store, e);
    closeJobOfMessageInTxn(store, message, now.toISOString());
  }
  return 'ok';
}

type EventFn = (type: 'delivered' | 'bounced', recipients: string[], details: Record<string, unknown>) => EventRecord;

/** Appends the message's delivery events (delivered, bounced) at one timestamp; also the finishing stage's bounces (signing.ts). */
export function eventFactory(store: Store, m: MessageRecord, timestamp: string): EventFn {
  return (eventType, recipients, details) => appendEventInTxn(store, deliveryEvent(m, timestamp, eventType, recipients, details));
}

/**
 * One job of the message finished at `at` (ISO 8601); the message is `sent` when none is left,
 * finished then (retention counts from it). Also broadcast cancel's.
 */
export function closeJobOfMessageInTxn(store: Store, m: MessageRecord, at: string): void {
  const openJobs = Math.max(0, m.openJobs - 1);
  const ended = openJobs === 0 && m.openJobs > 0 ? { finishedAt: at } : {};
  dbsOf(store).messages.put(m.id, { ...m, ...ended, openJobs, status: openJobs === 0 ? 'sent' : m.status } satisfies MessageRecord);
  if (openJobs === 0 && m.openJobs > 0) dequeueMessageInTxn(store, m);
  // A broadcast is completed once every message it made has left the queue.
  if (openJobs === 0 && m.openJobs > 0 && m.broadcastId) bumpBroadcastInTxn(store, m.broadcastId, { finished: 1 });
}
