/**
 * Accepting messages: the message record, its body, one delivery job per recipient domain
 * (live channels, and sandbox ones scheduled for later) or simulated outcomes (sandbox channels
 * sent now; domain/sandbox-outcome.ts), and the `accepted` and `processed`
 * events are committed in one durable transaction. When commitMessages resolves, the messages
 * are on disk: only then does the API answer 200 or SMTP 250.
 *
 * A message to be composed or DKIM-signed is committed as it is, with an `unsigned` entry, and its
 * jobs are not yet due: the finishing stage composes and signs it after the commit and releases
 * them (store/signing.ts), so the answer waits for neither and a crash in between loses nothing.
 * A sandbox message sent now has no jobs: its simulated outcome is recorded there, once finished.
 * An API send is committed as its normalized request (`compose`) without a body: the record then
 * has what intake knew (no rendered html or text of a template, an estimated size) until then.
 */
import { acceptedDetails, eventBase, messageEvent, recipientsByDomain } from '../../domain/submission-events.js';
import { firstDueMs } from '../../domain/schedule.js';
import { laterSimulation, simulatedAtCommit, simulatedEvents } from '../../domain/sandbox-outcome.js';
import type { DeliveryJob, EventRecord, MessageRecord } from '../../domain/types.js';
import { awaitsFinishing, type AcceptedMessage, type SubmissionCommit } from '../port/messages.js';
import { advanceBroadcastInTxn } from './broadcasts.js';
import { dbsOf } from './databases.js';
import type { Encoded, Store } from './env.js';
import { encodedEach, readBytes } from './bytes-in-turns.js';
import { indexClientMessageIdInTxn } from './client-message-ids.js';
import { appendEventInTxn } from './events.js';
import { putIdempotencyInTxn } from './idempotency.js';
import { queueMessageInTxn } from './message-query.js';
import { putDueInTxn } from './queue.js';
import { reserveSendQuotaInTxn } from './send-quota.js';
import { putPendingSignatureInTxn } from './signing.js';
import { recordSimulationInTxn } from './sandbox-outcomes.js';
import { timeOrderedUuid } from '../../domain/uuid.js';

export type { AcceptedMessage };
/** The submission commit's input (store/port/messages.ts SubmissionCommit), under its older name. */
export type CommitInput = SubmissionCommit;
export { awaitsFinishing, reserveSendQuotaInTxn };

export async function commitMessages(store: Store, input: SubmissionCommit): Promise<void> {
  const now = input.now ?? new Date();
  const bodies = await encodedEach(input.messages, (m) => m.record.id, (m) => m.body);
  await store.write(() => {
    // Checks first: a throw before any write leaves nothing behind (and the child txn rolls back anyway).
    if (input.sendLimit) {
      const wanted = input.messages.reduce((n, m) => n + m.record.recipients.length, 0);
      reserveSendQuotaInTxn(store, input.sendLimit.accountId, wanted, input.sendLimit.limit);
    }
    for (const m of input.messages) commitOneInTxn(store, m, now, bodies.get(m.record.id));
    if (input.broadcastProgress) {
      const { broadcastId, ...p } = input.broadcastProgress;
      advanceBroadcastInTxn(store, broadcastId, {
        ...p,
        messageIds: input.messages.map((m) => m.record.id),
        // Sandbox messages sent now get their outcomes at the commit: they leave the queue at once.
        finished: input.messages.filter((m) => simulatedAtCommit(m.record, now.getTime())).length,
      });
    }
    if (input.idempotency) putIdempotencyInTxn(store, input.idempotency.accountId, input.idempotency.key, input.idempotency.record);
  });
}

/**
 * One message: its record and body, the `accepted` and `processed` events, then its jobs (live,
 * and sandbox scheduled for later) or simulated outcomes (sandbox sent now; sandbox-outcome.ts),
 * which wait for its finishing when it is to be composed or signed after the commit.
 */
function commitOneInTxn(store: Store, m: AcceptedMessage, now: Date, encodedBody: Encoded | undefined): void {
  const r = m.record;
  const queued = !simulatedAtCommit(r, now.getTime());
  const byDomain = queued ? recipientsByDomain(r.recipients) : new Map<string, string[]>();
  const base = eventBase(r);
  const ts = now.toISOString();
  const accepted = appendEventInTxn(store, messageEvent(base, { eventType: 'accepted', timestamp: ts, recipients: r.recipients, details: acceptedDetails(r) }));
  appendEventInTxn(store, messageEvent(base, { eventType: 'processed', timestamp: ts, recipients: r.recipients, details: { size: r.size } }));
  const pending = awaitsFinishing(m);
  // The accepted event's seq is kept so that leaving the queue is a key removal (dequeueMessageInTxn).
  // Object.assign, not a spread followed by the fields r lacks: such a literal makes new hidden
  // classes on every call (bench/RESULTS.md, "Literals that add fields to a spread"). Same fields, same order.
  const record: MessageRecord = Object.assign({}, r, laterSimulation(m, { queued, finishing: pending }), { status: queued ? ('queued' as const) : ('sent' as const), openJobs: byDomain.size, acceptedSeq: accepted.seq });
  dbsOf(store).messages.put(r.id, record);
  indexClientMessageIdInTxn(store, r);
  if (m.body) dbsOf(store).bodies.put(r.id, encodedBody ?? m.body);
  if (pending) {
    putPendingSignatureInTxn(store, r.id, {
      accountId: r.accountId,
      channelId: r.channelId,
      committedMs: Date.parse(r.createdAt),
      ...(m.signingDomain !== undefined && { domain: m.signingDomain }),
      ...(m.compose !== undefined && { compose: m.compose }),
    });
  }

  if (queued) {
    queueMessageInTxn(store, accepted);
    for (const [domain, recipients] of byDomain) putJobInTxn(store, { r, domain, recipients, now, due: !pending });
  } else if (!pending) {
    // One to compose or sign first gets its outcome once finished (signing.ts storeSignedBodies).
    const { events, suppress } = simulatedEvents(base, r, m.simulatedBounces, ts);
    recordSimulationInTxn(store, r, events, suppress);
  }
}

/** `due: false`: the job waits for its message to be finished outside jobsDue (store/signing.ts puts it in). */
function putJobInTxn(store: Store, o: { r: AcceptedMessage['record']; domain: string; recipients: string[]; now: Date; due: boolean }): void {
  const { r, domain, recipients, now } = o;
  const ts = now.toISOString();
  // A scheduled send's jobs are due at its time (domain/schedule.ts), the others at the commit.
  const due = new Date(firstDueMs(r.scheduledAt, now.getTime())).toISOString();
  const job: DeliveryJob = {
    id: timeOrderedUuid(),
    messageId: r.id,
    accountId: r.accountId,
    channelId: r.channelId,
    domain,
    recipients,
    state: 'queued',
    attempts: 0,
    createdAt: ts,
    dueAt: due,
    history: [],
  };
  dbsOf(store).jobs.put(job.id, job);
  dbsOf(store).messageJobs.put([r.id, job.id], 1);
  // dueMs(job) is the due time in ms: dueAt is an ISO string, which keeps its milliseconds.
  if (o.due) putDueInTxn(store, job);
}

export function getMessage(store: Store, id: string): MessageRecord | undefined {
  return dbsOf(store).messages.get(id) as MessageRecord | undefined;
}

/** How many message records the store holds. */
export function countMessages(store: Store): number {
  return dbsOf(store).messages.getCount();
}

/** Every message record, in id order: a full scan, for operators and checks. */
export function allMessages(store: Store): MessageRecord[] {
  return [...dbsOf(store).messages.getRange({})].map((e) => e.value as MessageRecord);
}

/** Up to smtp.maxMessageSize and more once signed: a large body is read a part per turn (bytes-in-turns.ts). */
export function getBody(store: Store, id: string): Promise<Buffer | undefined> {
  return readBytes(store, dbsOf(store).bodies, id);
}
