/**
 * Engagement and feedback coming back for a sent message: opens, clicks, unsubscribes and
 * resubscribes (public links), asynchronous bounces and complaints (inbound listener). Each is
 * one durable transaction holding the event (with its statistics counters, appendEventInTxn)
 * and the suppression it implies, so a crash never leaves one without the other.
 */
import type { EventRecord, EventType, MailSource, MailType, MessageRecord, SuppressionReason } from '../domain/types.js';
import type { Store } from './env.js';
import { appendEventInTxn } from './events.js';
import { addSuppressionInTxn, getSuppression, removeSuppressionInTxn } from './suppressions.js';

/** What an engagement event copies from its message (spec 2.7 list item fields). */
export interface EventSubject {
  accountId: string;
  channelId: string;
  messageId: string;
  mailType: MailType;
  mailSource: MailSource;
  subject: string;
  tags: string[];
  metadata: Record<string, string>;
}

export function subjectOf(m: MessageRecord): EventSubject {
  return {
    accountId: m.accountId,
    channelId: m.channelId,
    messageId: m.id,
    mailType: m.mailType,
    mailSource: m.mailSource,
    subject: m.subject,
    tags: m.tags,
    metadata: m.metadata,
  };
}

export interface EngagementInput {
  subject: EventSubject;
  recipients: string[];
  details: Record<string, unknown>;
  at?: Date;
}

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
 */
export async function recordAsyncBounce(store: Store, e: EngagementInput & { hard: boolean }): Promise<void> {
  await store.write(() => {
    append(store, 'bounced', e, e.recipients);
    if (!e.hard) return;
    const { channelId, mailType } = e.subject;
    for (const email of e.recipients) addSuppressionInTxn(store, { channelId, mailType, email, reason: 'bounce' });
  });
}

/** A feedback report (complaint): the `complained` event and a suppression (reason complaint). */
export async function recordComplaint(store: Store, e: EngagementInput): Promise<void> {
  await store.write(() => {
    append(store, 'complained', e, e.recipients);
    const { channelId, mailType } = e.subject;
    for (const email of e.recipients) addSuppressionInTxn(store, { channelId, mailType, email, reason: 'complaint' });
  });
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
