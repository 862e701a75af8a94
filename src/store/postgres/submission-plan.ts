/**
 * What one submission commit writes, computed before the transaction (pure, no I/O): each
 * message's stored record, its delivery jobs (live, and sandbox scheduled for later) or simulated
 * outcomes (sandbox sent now, unless it waits to be composed or signed: then once it is finished;
 * domain/sandbox-outcome.ts), the events (accepted, processed, and
 * sandbox's delivered/bounced) and the suppressions of simulated
 * bounces. The same records, jobs and events as the LMDB engine's messages.ts commitMessages.
 */
import { acceptedDetails, eventBase, messageEvent, recipientsByDomain, type MessageEventBase } from '../../domain/submission-events.js';
import { firstDueMs } from '../../domain/schedule.js';
import { laterSimulation, simulatedAtCommit, simulatedEvents } from '../../domain/sandbox-outcome.js';
import type { DeliveryJob, EventRecord, MessageRecord } from '../../domain/types.js';
import { awaitsFinishing, type AcceptedMessage } from '../port/messages.js';
import type { StoredMessage } from './message-rows.js';
import type { NewJob } from './queue-tx.js';
import type { SuppressionAdd } from './suppressions-tx.js';
import { timeOrderedUuid } from '../../domain/uuid.js';

type EventDraft = Omit<EventRecord, 'seq'>;

export interface SubmissionPlan {
  stored: StoredMessage[];
  jobs: NewJob[];
  events: EventDraft[];
  suppressions: SuppressionAdd[];
}

export function planSubmission(messages: readonly AcceptedMessage[], now: Date): SubmissionPlan {
  const plan: SubmissionPlan = { stored: [], jobs: [], events: [], suppressions: [] };
  const ts = now.toISOString();
  for (const m of messages) {
    const r = m.record;
    const queued = !simulatedAtCommit(r, now.getTime());
    const byDomain = queued ? recipientsByDomain(r.recipients) : new Map<string, string[]>();
    const finishing = awaitsFinishing(m);
    const record: MessageRecord = { ...r, ...laterSimulation(m, { queued, finishing }), status: queued ? 'queued' : 'sent', openJobs: byDomain.size };
    plan.stored.push({ accepted: m, record });
    const base = eventBase(r);
    plan.events.push(messageEvent(base, { eventType: 'accepted', timestamp: ts, recipients: r.recipients, details: acceptedDetails(r) }));
    plan.events.push(messageEvent(base, { eventType: 'processed', timestamp: ts, recipients: r.recipients, details: { size: r.size } }));
    // A message to finish first: its jobs wait (not due) until storeFinished.
    for (const [domain, recipients] of byDomain) plan.jobs.push({ job: newJob(r, domain, recipients, ts), due: !finishing });
    // A sandbox one to finish first gets its outcome once finished (finishing-store.ts).
    if (!queued && !finishing) simulateOutcomes(plan, m, base, ts);
  }
  return plan;
}

/** A queued job due at the commit time, or a scheduled send's time when later (its dueAt keeps the milliseconds). */
function newJob(r: AcceptedMessage['record'], domain: string, recipients: string[], ts: string): DeliveryJob {
  const dueAt = new Date(firstDueMs(r.scheduledAt, Date.parse(ts))).toISOString();
  return {
    id: timeOrderedUuid(),
    messageId: r.id,
    accountId: r.accountId,
    channelId: r.channelId,
    domain,
    recipients,
    state: 'queued',
    attempts: 0,
    createdAt: ts,
    dueAt,
    history: [],
  };
}

/** Sandbox sent now: nothing leaves the machine; outcomes are simulated (DESIGN.md), bounced addresses suppressed. */
function simulateOutcomes(plan: SubmissionPlan, m: AcceptedMessage, base: MessageEventBase, ts: string): void {
  const r = m.record;
  const { events, suppress } = simulatedEvents(base, r, m.simulatedBounces, ts);
  plan.events.push(...events);
  for (const rcpt of suppress) plan.suppressions.push({ channelId: r.channelId, mailType: r.mailType, email: rcpt, reason: 'bounce' });
}
