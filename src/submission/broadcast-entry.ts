/**
 * One broadcast entry as the message the expander commits (broadcast-expander.ts): its record and
 * its normalized request, as an API send is committed (transactional.ts), so that the expansion
 * is main-thread work only and the finishing stage (finishing.ts) renders, composes and signs after
 * the commit. What the message will carry is fixed here: Message-ID, Date and the multipart
 * boundaries, so composing after the commit, or again after a crash, gives the same message.
 */
import { domainOf } from '../domain/address.js';
import type { AcceptedMessage } from '../store/port/messages.js';
import type { BroadcastRecord } from '../store/port/broadcasts.js';
import type { EngagementInput } from '../workers/engagement.js';
import type { BroadcastCommon, BroadcastEntry } from './broadcast.js';
import type { BuildRequest } from './ports.js';
import { simulatedBounces } from './sender.js';
import { forStorage, type CommittedRequest } from './finishing.js';
import type { IntakeTemplates } from './template-check.js';
import { estimatedSize } from './transactional.js';
import { timeOrderedUuid } from '../domain/uuid.js';

/** What is the same for every entry of a batch: looked up once per batch, not per entry. */
export interface EntryContext {
  /** The DKIM d= domain, when the From domain has a key (signed with the key of the finishing moment). */
  signingDomain: string | undefined;
  /** The broadcast's engagement input, without a message id or recipient yet (engagement.ts). */
  engagement: EngagementInput | undefined;
  /** The intake's template check, its large parts prepared for this broadcast before the batch (template-check.ts). */
  templates: IntakeTemplates;
}

/**
 * The message of one entry, to commit. The template's subject is rendered now (the record and
 * its events carry it from the commit on); one that fails with this entry's data throws the
 * AppError (templating_error) that makes the entry a failure row before any commit.
 */
export function entryMessage(
  b: BroadcastRecord<BroadcastCommon>,
  row: { index: number; entry: BroadcastEntry },
  r: { send: string[]; suppressed: string[] },
  ctx: EntryContext,
): AcceptedMessage {
  const c = b.common;
  const { entry } = row;
  const id = timeOrderedUuid();
  const messageIdHeader = `<${id}@${domainOf(c.from.email)}>`;
  // A token names the recipient only when the message has exactly one, as engagementOf does
  // (domain/tracking-token.ts).
  const engagement = ctx.engagement && { ...ctx.engagement, messageId: id, recipient: r.send.length === 1 ? r.send[0]! : '' };
  const template = { ...c.template, data: { ...(c.template.data ?? {}), ...entry.data } };
  const subject = ctx.templates.check(template, engagement);
  const request: BuildRequest = {
    template,
    subject,
    compose: {
      from: c.from,
      to: entry.to,
      cc: entry.cc,
      replyTo: c.replyTo,
      attachments: c.attachments,
      headers: entry.headers,
      messageId: messageIdHeader,
      // As transactional.ts: composeMessage writes it as an RFC 5322 3.3 date with a numeric zone.
      date: new Date().toUTCString(),
      baseBoundary: id.replaceAll('-', ''),
    },
    engagement,
  };
  // The entry's index goes with the request: a composition that fails for good after the commit
  // becomes this entry's failure row (finishing.ts, store/broadcasts.ts).
  const compose: CommittedRequest = { ...forStorage(request), broadcastEntry: row.index };
  return {
    record: entryRecord(b, entry, { id, messageIdHeader, subject, size: estimatedSize(request), ...r }),
    compose,
    signingDomain: ctx.signingDomain,
    simulatedBounces: c.deliveryType === 'sandbox' ? simulatedBounces(r.send) : undefined,
  };
}

/** The stored record, as known at the commit: the rendered html and text come with composition. */
function entryRecord(
  b: BroadcastRecord<BroadcastCommon>,
  entry: BroadcastEntry,
  m: { id: string; messageIdHeader: string; subject: string; size: number; send: string[]; suppressed: string[] },
): AcceptedMessage['record'] {
  const c = b.common;
  return {
    id: m.id,
    accountId: b.accountId,
    channelId: b.channelId,
    mailType: 'broadcast',
    mailSource: 'api',
    deliveryType: c.deliveryType,
    broadcastId: b.id,
    createdAt: new Date().toISOString(),
    messageIdHeader: m.messageIdHeader,
    subject: m.subject,
    from: c.from,
    to: entry.to,
    cc: entry.cc,
    bcc: entry.bcc,
    replyTo: c.replyTo,
    tracking: c.tracking,
    tags: entry.tags,
    headers: entry.headers,
    metadata: entry.metadata,
    attachments: c.attachments.map((a) => ({ fileName: a.fileName, disposition: a.disposition, size: a.size, contentType: a.contentType })),
    // An estimate until composition stores the exact size (transactional.ts estimatedSize).
    size: m.size,
    recipients: m.send,
    suppressed: m.suppressed,
    ...(c.templateOrigin && { template: c.templateOrigin }),
    // A scheduled broadcast's messages wait for its time, whenever the expander commits them
    // (before a restart or after): their jobs are due then, or at the commit once it has passed.
    ...(b.scheduledAt !== undefined && { scheduledAt: b.scheduledAt }),
  };
}
