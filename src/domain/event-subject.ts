/**
 * What an event about a message copies from it (spec 2.7 list item fields): the engagement and
 * feedback verbs (store/port/engagement.ts) take it instead of the message, so an unsubscribe
 * still works after retention removed the message (tracking/service.ts builds one from the
 * channel then).
 */
import type { MailSource, MailType, MessageRecord } from './types.js';

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
