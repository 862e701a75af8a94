/**
 * Engagement and feedback coming back for a sent message: opens, clicks, unsubscribes and
 * resubscribes (public links), asynchronous bounces and complaints (inbound listener). Each is
 * one durable transaction holding the event (with its statistics counters, appendEventInTxn)
 * and the suppression it implies, so a crash never leaves one without the other.
 */
import { subjectOf, type EventSubject } from '../../domain/event-subject.js';
import type { EventRecord, EventType, SuppressionReason } from '../../domain/types.js';
import type { EngagementInput } from '../port/engagement.js';
import { dbsOf } from './databases.js';
import type { Store } from './env.js';
import { appendEventInTxn } from './events.js';
import { KEY_MAX } from './layout.js';
import { addSuppressionInTxn, getSuppression, removeSuppressionInTxn } from './suppressions.js';

// Declared in domain/ and the port now; re-exported for the callers not yet on the port.
export { subjectOf, type EngagementInput, type EventSubject };

/** `opened` or `clicked`: one event, counted by the statistics. */
export async function recordEngagement(store: Store, type: 'opened' | 'clicked', e: EngagementInput): Promise<EventRecord> {
  return store.write(() => append(store, type, e, e.recipients));
}

/**
 * `unsubscribed`: suppresses the recipients for the message's mail type on its channel (reason
 * unsubscribe) and records the event for those newly suppressed. Repeated requests (mail
 * clients may POST more than once) change nothing and record nothing. Returns the addresses
 * that were newly suppressed.
 */
export async function recordUnsubscribe(store: Store, e: EngagementInput): Promise<string[]> {
  return store.write(() => suppressWithEvent(store, 'unsubscribed', 'unsubscribe', e));
}

/**
 * `resubscribed`: lifts suppressions that an unsubscribe made; a suppression for another
 * reason (bounce, complaint, manual) stays. Returns the addresses that were lifted.
 */
export async function recordResubscribe(store: Store, e: EngagementInput): Promise<string[]> {
  return store.write(() => {
    const { channelId, mailType } = e.subject;
    const lifted = e.recipients.filter(
      (email) => getSuppression(store, channelId, mailType, email)?.reason === 'unsubscribe' && removeSuppressionInTxn(store, { channelId, mailType, email }),
    );
    if (lifted.length > 0) append(store, 'resubscribed', e, lifted);
    return lifted;
  });
}

/**
 * An asynchronous bounce (a DSN that came back after delivery was accepted): the `bounced`
 * event, and for a hard bounce the suppression (reason bounce), as synchronous bounces get.
 * At most one per message and recipient: a recipient that already has a bounced event from a
 * report (details.async) is left out, as a repeated or replayed DSN says nothing new (and would
 * count the bounce again in the statistics). Returns the recipients recorded.
 */
export async function recordAsyncBounce(store: Store, e: EngagementInput & { hard: boolean }): Promise<string[]> {
  return store.write(() => {
    const fresh = withoutReportEvent(store, e, 'bounced');
    if (fresh.length === 0) return fresh;
    append(store, 'bounced', e, fresh);
    const { channelId, mailType } = e.subject;
    if (e.hard) for (const email of fresh) addSuppressionInTxn(store, { channelId, mailType, email, reason: 'bounce' });
    return fresh;
  });
}

/**
 * A feedback report (complaint): the `complained` event and a suppression (reason complaint).
 * At most one per message and recipient, as for asynchronous bounces. Returns the recipients recorded.
 */
export async function recordComplaint(store: Store, e: EngagementInput): Promise<string[]> {
  return store.write(() => {
    const fresh = withoutReportEvent(store, e, 'complained');
    if (fresh.length === 0) return fresh;
    append(store, 'complained', e, fresh);
    const { channelId, mailType } = e.subject;
    for (const email of fresh) addSuppressionInTxn(store, { channelId, mailType, email, reason: 'complaint' });
    return fresh;
  });
}

/**
 * The recipients that have no event of this type from a report on the message yet. Inside the
 * write, so two reports racing see each other. The message's events are walked by key and only
 * those of the type are read (the type index is a key lookup), so opens and clicks cost no decoding.
 */
function withoutReportEvent(store: Store, e: EngagementInput, type: 'bounced' | 'complained'): string[] {
  const db = dbsOf(store);
  const { accountId, messageId } = e.subject;
  const seen = new Set<string>();
  for (const key of db.messageEvents.getKeys({ start: [messageId], end: [messageId, KEY_MAX] })) {
    const seq = (key as [string, number])[1];
    if (!db.eventIndex.doesExist([accountId, 'e', type, seq])) continue;
    const event = db.events.get(seq) as EventRecord | undefined;
    // Synchronous bounces (the delivery attempt's own) are not reports.
    if (event && (type === 'complained' || event.details.async === true)) for (const r of event.recipients) seen.add(r.toLowerCase());
  }
  return [...new Set(e.recipients)].filter((r) => !seen.has(r.toLowerCase()));
}

function suppressWithEvent(store: Store, type: EventType, reason: SuppressionReason, e: EngagementInput): string[] {
  const { channelId, mailType } = e.subject;
  const added = e.recipients.filter((email) => addSuppressionInTxn(store, { channelId, mailType, email, reason }));
  if (added.length > 0) append(store, type, e, added);
  return added;
}

function append(store: Store, eventType: EventType, e: EngagementInput, recipients: string[]): EventRecord {
  return appendEventInTxn(store, {
    ...e.subject,
    eventType,
    timestamp: (e.at ?? new Date()).toISOString(),
    recipients,
    details: e.details,
  });
}
