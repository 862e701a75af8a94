/**
 * What recording a delivery attempt's outcome means, as pure data (DESIGN "recording an outcome
 * is one transaction elsewhere"; KumoMTA's Delivery / TransientFailure / Bounce / Expiration
 * records): which recipients were delivered, bounced, deferred or given up, the attempt's entry
 * in the job's history, the job afterwards and the `delivered` / `bounced` events. Both store
 * engines record it this way (QueuePort.recordOutcomes, store/port/queue.ts); each writes it in
 * one transaction with the suppressions and the message's open-job count. Also the operator's
 * drop, which ends a job the same way (a bounced event per recipient), so nothing disappears
 * silently.
 */
import type { AttemptResult, RecipientResult } from './delivery-result.js';
import { definedOnly } from './defined.js';
import type { DeliveryAttempt, DeliveryJob, EventRecord, MessageRecord } from './types.js';

/** Attempt history entries kept per job (the oldest are dropped beyond this). */
export const MAX_HISTORY = 50;

/** The fields of a message its delivery events carry. */
export type EventSource = Pick<MessageRecord, 'id' | 'accountId' | 'channelId' | 'mailType' | 'mailSource' | 'subject' | 'tags' | 'metadata'>;

/** A delivery event before the log gives it its seq. */
export type DeliveryEventDraft = Omit<EventRecord, 'seq'>;

export interface AttemptPlan {
  attempt: number;
  delivered: RecipientResult[];
  bounced: RecipientResult[];
  deferred: RecipientResult[];
  /** Deferred recipients are given up: no next due time (RFC 5321 4.5.4.1). */
  expire: boolean;
  /** The job afterwards: queued again at nextDueAtMs (its deferred recipients only), or done. */
  next: DeliveryJob;
  requeued: boolean;
}

/**
 * The job after the attempt (`job` as leased):
 * requeued with its deferred recipients at nextDueAtMs, else done. attemptAt is the attempt's
 * timestamp, as its events and history entry carry it.
 */
export function planAttempt(job: DeliveryJob, result: AttemptResult, attemptAt: string, nextDueAtMs: number | undefined): AttemptPlan {
  const attempt = job.attempts + 1;
  const by = (o: RecipientResult['outcome']) => result.recipients.filter((r) => r.outcome === o);
  const delivered = by('delivered');
  const bounced = by('bounced');
  const deferred = by('deferred');
  const expire = deferred.length > 0 && nextDueAtMs === undefined;
  const history = [...job.history, historyEntry(result, attemptAt)].slice(-MAX_HISTORY);
  // The lease ends: its expiry and owner go; a generation the engine keeps in the record stays
  // (the next lease takes the next one).
  const { leaseUntil: _until, leaseOwner: _owner, ...rest } = job as DeliveryJob & { leaseOwner?: string };
  const requeued = deferred.length > 0 && !expire;
  // A deferral for want of a source waits until a source may send: that wait is not the message's age.
  if (requeued && result.poolRefused) rest.heldMs = (job.heldMs ?? 0) + Math.max(0, nextDueAtMs! - Date.parse(attemptAt));
  const next: DeliveryJob = requeued
    ? { ...rest, attempts: attempt, history, recipients: deferred.map((r) => r.recipient), state: 'queued', dueAt: new Date(nextDueAtMs!).toISOString() }
    : { ...rest, state: 'done', attempts: attempt, history };
  return { attempt, delivered, bounced, deferred, expire, next, requeued };
}

/**
 * The attempt's events, in the order they are appended: one `delivered` for the delivered
 * recipients, one `bounced` per bounced recipient, and when the deferred ones are given up one
 * `bounced` (soft, reason expired) per deferred recipient.
 */
export function attemptEvents(m: EventSource, plan: AttemptPlan, result: AttemptResult, attemptAt: string): DeliveryEventDraft[] {
  // A simulated outcome (sandbox) had no session: it says so instead of naming an MX and its TLS.
  const common = result.simulated ? { simulated: true, attempt: plan.attempt } : { mx: result.mx, tls: result.tls, attempt: plan.attempt };
  const out: DeliveryEventDraft[] = [];
  const event = (type: 'delivered' | 'bounced', recipients: string[], details: Record<string, unknown>) => out.push(deliveryEvent(m, attemptAt, type, recipients, details));
  // Object.assign in the order a spread would write them: on Node 20's V8 {...reply, ...common}
  // builds new hidden classes on every call (1.7 µs against 0.1 for this; bench/RESULTS.md, issue 36).
  if (plan.delivered.length > 0) event('delivered', plan.delivered.map((r) => r.recipient), Object.assign({}, replyOf(plan.delivered[0]), common));
  for (const r of plan.bounced) event('bounced', [r.recipient], Object.assign({}, replyOf(r), common, { bounceType: r.bounceType ?? 'hard', category: r.category }));
  // RFC 5321 4.5.4.1: after the give-up time the message is returned as undeliverable.
  if (plan.expire) for (const r of plan.deferred) event('bounced', [r.recipient], Object.assign({}, replyOf(r), common, { bounceType: 'soft', category: r.category, reason: 'expired' }));
  return out;
}

/** The hard bounces an attempt may suppress (bounceType not soft; the DNS-failure rule decides further). */
export function hardBounces(plan: AttemptPlan): RecipientResult[] {
  return plan.bounced.filter((r) => r.bounceType !== 'soft');
}

/** What RecordedOutcome reports of the attempt (status and suppressed are the engine's). */
export function outcomeLists(plan: AttemptPlan): { delivered: string[]; bounced: string[]; deferred: string[]; expired: string[] } {
  const names = (rs: RecipientResult[]) => rs.map((r) => r.recipient);
  return {
    delivered: names(plan.delivered),
    bounced: names(plan.bounced),
    deferred: plan.expire ? [] : names(plan.deferred),
    expired: plan.expire ? names(plan.deferred) : [],
  };
}

/** `postrider queue drop` of a queued job: one bounced event per recipient, reason "dropped by operator". */
export function dropEvents(m: EventSource, job: DeliveryJob, now: string): DeliveryEventDraft[] {
  const last = job.history[job.history.length - 1];
  return job.recipients.map((r) =>
    deliveryEvent(m, now, 'bounced', [r], { response: 'dropped by operator', lastResponse: last?.response, attempt: job.attempts, bounceType: 'soft', category: 'other', reason: 'dropped by operator' }),
  );
}

/** A delivery event (delivered, bounced) of the message at `timestamp`; details without undefined values. */
export function deliveryEvent(m: EventSource, timestamp: string, eventType: 'delivered' | 'bounced', recipients: string[], details: Record<string, unknown>): DeliveryEventDraft {
  return {
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
  };
}

function replyOf(r: RecipientResult): Record<string, unknown> {
  return { smtpCode: r.smtpCode, enhancedCode: r.enhancedCode, response: r.response };
}

/**
 * The attempt as the job's history keeps it: the overall outcome and the reply that made it (a
 * deferred recipient's, else a bounced one's, else the attempt's), never a 250 beside `bounced`.
 */
export function historyEntry(result: AttemptResult, at: string): DeliveryAttempt {
  const deferred = result.recipients.find((r) => r.outcome === 'deferred');
  const bounced = deferred ? undefined : result.recipients.find((r) => r.outcome === 'bounced');
  const outcome = deferred ? 'deferred' : bounced ? 'bounced' : 'delivered';
  const lead = deferred ?? bounced ?? { smtpCode: result.smtpCode, enhancedCode: result.enhancedCode, response: result.response };
  return definedOnly({ at, mx: result.mx, smtpCode: lead.smtpCode, enhancedCode: lead.enhancedCode, response: lead.response, outcome, tls: result.tls, tlsDetail: result.tlsDetail, mtaSts: result.mtaSts }) as DeliveryAttempt;
}
