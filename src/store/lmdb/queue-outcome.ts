/**
 * Recording what a delivery attempt did, in ONE durable transaction (DESIGN "recording an
 * outcome is one transaction elsewhere"; KumoMTA's Delivery / TransientFailure / Bounce /
 * Expiration records): the job's state, attempts and history, the next due time, the
 * `delivered` and `bounced` events, suppression of hard-bounced addresses and the message's
 * open-job count. Also the operator's drop, which ends a job the same way (a bounced event with
 * the reason), so nothing disappears silently.
 */
import type { AttemptResult, RecipientResult } from '../../domain/delivery-result.js';
import { definedOnly } from '../../domain/defined.js';
import type { DeliveryAttempt, DeliveryJob, EventRecord, MessageRecord } from '../../domain/types.js';
import { dbsOf } from './databases.js';
import type { Store } from './env.js';
import { appendEventInTxn } from './events.js';
import type { OperatorResult, RecordedOutcome, RecordOutcomeInput } from '../port/queue.js';
import { dueMs, holdsLeaseInTxn, leaseMs, requeueInTxn } from './queue.js';
import { addSuppressionInTxn } from './suppressions.js';
import { suppressibleInTxn } from './dns-failures.js';
import { dequeueMessageInTxn } from './message-query.js';
import { bumpBroadcastInTxn } from './broadcast-stats.js';

export type { RecordedOutcome, RecordOutcomeInput } from '../port/queue.js';

/** Attempt history entries kept per job (the oldest are dropped beyond this). */
export const MAX_HISTORY = 50;

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
  const attempt = job.attempts + 1;
  const out: RecordedOutcome = { status: 'stale', attempt, delivered: [], bounced: [], deferred: [], expired: [], suppressed: [] };
  // The lease is still ours exactly while its jobsLeased entry [leaseUntil, id] exists and holds
  // our generation and owner (fencing, queue.ts): every verb that ends or changes a lease removes
  // that entry in the same write, and nothing changes a leased job's record but those verbs. So
  // the record is the job as leased, and reading the entry stands for reading and decoding it.
  const current = job;
  if (!holdsLeaseInTxn(store, job)) return out;
  dbsOf(store).jobsLeased.remove([leaseMs(current), current.id]);

  const by = (o: RecipientResult['outcome']) => result.recipients.filter((r) => r.outcome === o);
  const delivered = by('delivered');
  const bounced = by('bounced');
  const deferred = by('deferred');
  const expire = deferred.length > 0 && input.nextDueAtMs === undefined;
  const message = dbsOf(store).messages.get(job.messageId) as MessageRecord | undefined;
  const at = input.attemptAt.toISOString();
  const common = { mx: result.mx, tls: result.tls, attempt };

  if (message) {
    const event = eventFactory(store, message, at);
    const suppressible = suppressibleInTxn(store, { accountId: message.accountId, domain: job.domain, atMs: input.attemptAt.getTime(), bounced });
    if (delivered.length > 0) event('delivered', delivered.map((r) => r.recipient), { ...replyOf(delivered[0]), ...common });
    for (const r of bounced) {
      event('bounced', [r.recipient], { ...replyOf(r), ...common, bounceType: r.bounceType ?? 'hard', category: r.category });
      if (r.bounceType !== 'soft' && suppressible(r) && addSuppressionInTxn(store, { channelId: message.channelId, mailType: message.mailType, email: r.recipient, reason: 'bounce' })) {
        out.suppressed.push(r.recipient);
      }
    }
    // RFC 5321 4.5.4.1: after the give-up time the message is returned as undeliverable.
    if (expire) for (const r of deferred) event('bounced', [r.recipient], { ...replyOf(r), ...common, bounceType: 'soft', category: r.category, reason: 'expired' });
  }

  const history = [...current.history, historyEntry(result, at)].slice(-MAX_HISTORY);
  if (deferred.length > 0 && !expire) {
    requeueInTxn(store, current, input.nextDueAtMs!, { attempts: attempt, history, recipients: deferred.map((r) => r.recipient) });
    out.status = 'requeued';
  } else {
    const { leaseUntil: _until, leaseOwner: _owner, ...rest } = current;
    dbsOf(store).jobs.put(job.id, { ...rest, state: 'done', attempts: attempt, history } satisfies DeliveryJob);
    if (message) closeJobOfMessageInTxn(store, message);
    out.status = 'done';
  }
  out.delivered = delivered.map((r) => r.recipient);
  out.bounced = bounced.map((r) => r.recipient);
  out.deferred = expire ? [] : deferred.map((r) => r.recipient);
  out.expired = expire ? deferred.map((r) => r.recipient) : [];
  return out;
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
    const event = eventFactory(store, message, now.toISOString());
    const last = job.history[job.history.length - 1];
    for (const r of job.recipients) {
      event('bounced', [r], { response: 'dropped by operator', lastResponse: last?.response, attempt: job.attempts, bounceType: 'soft', category: 'other', reason: 'dropped by operator' });
    }
    closeJobOfMessageInTxn(store, message);
  }
  return 'ok';
}

type EventFn = (type: 'delivered' | 'bounced', recipients: string[], details: Record<string, unknown>) => EventRecord;

/** Appends the message's delivery events (delivered, bounced) at one timestamp; also the finishing stage's bounces (signing.ts). */
export function eventFactory(store: Store, m: MessageRecord, timestamp: string): EventFn {
  return (eventType, recipients, details) =>
    appendEventInTxn(store, {
      accountId: m.accountId,
      channelId: m.channelId,
      messageId: m.id,
      mailType: m.mailType,
      mailSource: m.mailSource,
      eventType,
      timestamp,
      subject: m.subject,
      recipients,
      tags: m.tags,
      metadata: m.metadata,
      details: definedOnly(details),
    });
}

/** One job of the message finished; the message is `sent` when none is left. Also broadcast cancel's. */
export function closeJobOfMessageInTxn(store: Store, m: MessageRecord): void {
  const openJobs = Math.max(0, m.openJobs - 1);
  dbsOf(store).messages.put(m.id, { ...m, openJobs, status: openJobs === 0 ? 'sent' : m.status } satisfies MessageRecord);
  if (openJobs === 0 && m.openJobs > 0) dequeueMessageInTxn(store, m);
  // A broadcast is completed once every message it made has left the queue.
  if (openJobs === 0 && m.openJobs > 0 && m.broadcastId) bumpBroadcastInTxn(store, m.broadcastId, { finished: 1 });
}

function replyOf(r: RecipientResult): Record<string, unknown> {
  return { smtpCode: r.smtpCode, enhancedCode: r.enhancedCode, response: r.response };
}

/** The attempt as the job's history keeps it: the overall outcome and the most relevant reply. */
function historyEntry(result: AttemptResult, at: string): DeliveryAttempt {
  const deferred = result.recipients.find((r) => r.outcome === 'deferred');
  const outcome = deferred ? 'deferred' : result.recipients.some((r) => r.outcome === 'bounced') ? 'bounced' : 'delivered';
  const lead = deferred ?? { smtpCode: result.smtpCode, enhancedCode: result.enhancedCode, response: result.response };
  return definedOnly({ at, mx: result.mx, smtpCode: lead.smtpCode, enhancedCode: lead.enhancedCode, response: lead.response, outcome, tls: result.tls, tlsDetail: result.tlsDetail, mtaSts: result.mtaSts }) as DeliveryAttempt;
}

