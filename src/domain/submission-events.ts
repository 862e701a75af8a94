/**
 * What both store engines derive alike from an accepted message at its commit: the fields every
 * one of its events carries, and its recipients split into one delivery job per domain (each
 * domain's MX is tried on its own). Pure, so the LMDB and PostgreSQL engines share it.
 */
import { domainOf } from './address.js';
import type { EventRecord, MessageRecord } from './types.js';

export type MessageEventBase = Pick<EventRecord, 'accountId' | 'channelId' | 'messageId' | 'mailType' | 'mailSource' | 'subject' | 'tags' | 'metadata'>;

export function eventBase(r: Pick<MessageRecord, 'accountId' | 'channelId' | 'id' | 'mailType' | 'mailSource' | 'subject' | 'tags' | 'metadata'>): MessageEventBase {
  return {
    accountId: r.accountId,
    channelId: r.channelId,
    messageId: r.id,
    mailType: r.mailType,
    mailSource: r.mailSource,
    subject: r.subject,
    tags: r.tags,
    metadata: r.metadata,
  };
}

/**
 * One of a message's events: the base fields, then the event's own, in that order. Spelled out
 * field by field rather than as {...base, eventType, ...}: on Node 20's V8 every field added after
 * a leading spread builds new hidden classes on each call (about 0.5 KB of garbage per field;
 * bench/alloc.mjs), and each message is committed with two events.
 */
export function messageEvent(base: MessageEventBase, own: Pick<EventRecord, 'eventType' | 'timestamp' | 'recipients' | 'details'>): Omit<EventRecord, 'seq'> {
  return {
    accountId: base.accountId,
    channelId: base.channelId,
    messageId: base.messageId,
    mailType: base.mailType,
    mailSource: base.mailSource,
    subject: base.subject,
    tags: base.tags,
    metadata: base.metadata,
    eventType: own.eventType,
    timestamp: own.timestamp,
    recipients: own.recipients,
    details: own.details,
  };
}

/** The accepted event's details: a scheduled send says when it will go (issue 34), so webhooks learn it is scheduled. */
export function acceptedDetails(r: Pick<MessageRecord, 'scheduledAt'>): Record<string, unknown> {
  return r.scheduledAt === undefined ? {} : { scheduledAt: r.scheduledAt };
}

/** One delivery job per recipient domain: each domain's MX is tried on its own. */
export function recipientsByDomain(recipients: readonly string[]): Map<string, string[]> {
  const byDomain = new Map<string, string[]>();
  for (const rcpt of recipients) byDomain.set(domainOf(rcpt), [...(byDomain.get(domainOf(rcpt)) ?? []), rcpt]);
  return byDomain;
}
