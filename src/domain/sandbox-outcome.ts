/**
 * A sandbox channel's simulated outcomes (DESIGN.md: it takes mail exactly as a live one does,
 * but keeps it instead of delivering it). Each recipient is simulated as delivered, or as a hard
 * bounce at the reserved bounce domain (submission/sender.ts simulatedBounces).
 *
 * When: a sandbox message sent now gets its outcomes in its commit, or, when it is composed or
 * signed after the commit (submission/finishing.ts), once it is finished (finishedSimulation): one
 * that cannot be composed then ends with only that failure, as a live one does, never with a
 * simulated delivery before it. One scheduled for later
 * (issue 34) waits like a live one: it gets delivery jobs due at its time, so it shows
 * `scheduled`, can be canceled and moved, and the dispatcher records its simulated outcome when
 * it leases a job at that time (simulatedAttempt), with no DNS lookup and no connection.
 * Pure, so both store engines and the dispatcher share it.
 */
import type { AttemptResult, RecipientResult } from './delivery-result.js';
import { eventBase, messageEvent, type MessageEventBase } from './submission-events.js';
import type { DeliveryType, EventRecord, MessageRecord } from './types.js';

/** The replies a simulated outcome carries, at the commit and at a scheduled time alike. */
export const SIMULATED_DELIVERED = { smtpCode: 250, response: '250 2.0.0 OK (sandbox)' } as const;
export const SIMULATED_BOUNCE = { smtpCode: 550, enhancedCode: '5.1.1', response: '550 5.1.1 simulated bounce (sandbox)' } as const;

/**
 * Whether a message goes without delivery jobs, its outcomes simulated in its commit (or once it
 * is finished: laterSimulation): a sandbox message not scheduled for after the commit time. Live
 * messages and later sandbox ones get delivery jobs instead.
 */
export function simulatedAtCommit(r: { deliveryType: DeliveryType; scheduledAt?: string }, nowMs: number): boolean {
  return r.deliveryType === 'sandbox' && !(r.scheduledAt !== undefined && Date.parse(r.scheduledAt) > nowMs);
}

type EventDraft = Omit<EventRecord, 'seq'>;

/**
 * The commit's simulated events: one `delivered` for the delivered recipients, one `bounced`
 * per simulated bounce; `suppress` are the bounced addresses (a hard bounce suppresses, as live).
 */
export function simulatedEvents(base: MessageEventBase, r: Pick<MessageRecord, 'recipients'>, bounces: readonly string[] | undefined, ts: string): { events: EventDraft[]; suppress: string[] } {
  const bounced = new Set(bounces ?? []);
  const delivered = r.recipients.filter((x) => !bounced.has(x));
  const events: EventDraft[] = [];
  if (delivered.length > 0) events.push(messageEvent(base, { eventType: 'delivered', timestamp: ts, recipients: delivered, details: { simulated: true, ...SIMULATED_DELIVERED } }));
  for (const rcpt of bounced) {
    events.push(messageEvent(base, { eventType: 'bounced', timestamp: ts, recipients: [rcpt], details: { simulated: true, bounceType: 'hard', ...SIMULATED_BOUNCE } }));
  }
  return { events, suppress: [...bounced] };
}

/**
 * A scheduled sandbox message's attempt at its time (the dispatcher's, instead of MX and SMTP):
 * the job's recipients delivered, or bounced hard when the commit simulated them so (the
 * record's simulatedBounces). Recorded as any attempt, its events say `simulated: true`.
 */
export function simulatedAttempt(recipients: readonly string[], bounces: readonly string[] | undefined): AttemptResult {
  const bounced = new Set(bounces ?? []);
  const results = recipients.map((recipient): RecipientResult =>
    bounced.has(recipient)
      ? { recipient, outcome: 'bounced', bounceType: 'hard', category: 'unknown_user', phase: 'rcpt', ...SIMULATED_BOUNCE }
      : { recipient, outcome: 'delivered', category: 'delivered', phase: 'data', ...SIMULATED_DELIVERED },
  );
  const lead = results.find((x) => x.outcome === 'bounced') ?? results[0];
  return { recipients: results, tls: false, simulated: true, smtpCode: lead?.smtpCode, enhancedCode: lead?.enhancedCode, response: lead?.response ?? SIMULATED_DELIVERED.response };
}

/**
 * What a sandbox message whose outcome is not simulated in its commit keeps on its record: one
 * scheduled for later (`queued`), the bounces for its time; one sent now that waits to be
 * composed or signed (`finishing`), the bounces for when it is finished. The commit simulates
 * only when neither applies.
 */
export function laterSimulation(
  m: { record: { deliveryType: DeliveryType }; simulatedBounces?: string[] },
  o: { queued: boolean; finishing: boolean },
): Pick<MessageRecord, 'simulatedBounces' | 'simulateWhenFinished'> {
  if (m.record.deliveryType !== 'sandbox') return {};
  if (o.queued) return { simulatedBounces: m.simulatedBounces ?? [] };
  return o.finishing ? { simulateWhenFinished: m.simulatedBounces ?? [] } : {};
}

/**
 * The simulated outcome of a sandbox message sent now, recorded when its body is stored (the
 * store's storeFinished): none for any other message.
 */
export function finishedSimulation(r: MessageRecord, ts: string): { events: EventDraft[]; suppress: string[] } {
  if (r.deliveryType !== 'sandbox' || r.simulateWhenFinished === undefined) return { events: [], suppress: [] };
  return simulatedEvents(eventBase(r), r, r.simulateWhenFinished, ts);
}
