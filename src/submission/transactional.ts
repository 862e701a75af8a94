/**
 * POST /send/transactional and /send/broadcast/message (one SendMessageRequest each),
 * ingress-independent: resolve the channel, apply account and recipient policy, validate and
 * normalize, check the template (template-check.ts), then commit durably the normalized request;
 * rendering, MIME composition and the DKIM signature are made after the commit (the finishing
 * stage, finishing.ts), so the 200 waits for none of them. What the 200 returns (the messageId)
 * and what the message will carry (Message-ID, Date, multipart boundaries) are fixed here, so
 * composing after the commit, or again after a crash, gives the message the 200 described. The
 * HTTP adapter only maps the result to the wire. transactional-batch.ts reuses prepareMessage.
 */
import type { Address } from '../domain/address.js';
import { domainOf, recipientKey } from '../domain/address.js';
import { AppError, FieldErrorList } from '../domain/errors.js';
import { checkScheduledAt } from '../domain/schedule.js';
import {
  checkContent,
  mergeTracking,
  normalizeAddress,
  normalizeAddresses,
  normalizeAttachments,
  normalizeHeaders,
  normalizeMetadata,
  normalizeRecipients,
  type Attachment,
  type AttachmentInput,
  type Recipients,
  type SendTemplateInput,
} from '../domain/send-rules.js';
import type { Account, Channel, MailType, Tracking } from '../domain/types.js';
import type { AcceptedMessage, SendQuota } from '../store/port/messages.js';
import { sendChannel } from './channel.js';
import type { SenderHeaders } from './sender-headers.js';
import { idempotencyContext } from './idempotency.js';
import { checkDenyList, sendingAccount, splitSuppressed } from './policy.js';
import { enqueue } from './enqueue.js';
import { engagementOf } from './engagement.js';
import type { SubmissionDeps } from './deps.js';
import type { BuildRequest } from './ports.js';
import { addSenderFieldError, senderSigningDomain, simulatedBounces } from './sender.js';
import { forStorage } from './finishing.js';
import { headerSafe } from '../workers/render.js';
import { resolvedOrErrors, TemplateLookup, type ResolvedTemplate, type TemplateResolution } from './stored-template.js';
import { timeOrderedUuid } from '../domain/uuid.js';

export interface TransactionalBody {
  from: Address;
  to: Address[];
  cc?: Address[];
  bcc?: Address[];
  replyTo?: Address[];
  subject?: string;
  html?: string;
  text?: string;
  /** Inline, or a stored template's reference (stored-template.ts). */
  template?: SendTemplateInput;
  tracking?: Partial<Tracking>;
  attachments?: AttachmentInput[];
  tags?: string[];
  headers?: Record<string, string>;
  metadata?: Record<string, string | number | boolean>;
  /** RFC 3339 with offset: not delivered before (domain/schedule.ts). */
  scheduledAt?: string;
}

/** The body with the sender's principal and headers (sender-headers.ts). */
export interface TransactionalRequest extends SenderHeaders {
  body: TransactionalBody;
}

export interface TransactionalResponse {
  status: 'accepted';
  messageId: string;
  suppressions: string[];
}

/** The mail type of a SendMessageRequest decides its route name for idempotency. */
const ROUTES: Record<MailType, string> = { transactional: 'send/transactional', broadcast: 'send/broadcast/message' };

/** POST /send/transactional. */
export function sendTransactional(deps: SubmissionDeps, req: TransactionalRequest): Promise<TransactionalResponse> {
  return sendOne(deps, req, 'transactional');
}

/**
 * POST /send/broadcast/message: one SendMessageRequest sent as broadcast mail, so broadcast
 * suppressions, broadcast statistics and List-Unsubscribe apply as to the messages of a broadcast.
 */
export function sendBroadcastMessage(deps: SubmissionDeps, req: TransactionalRequest): Promise<TransactionalResponse> {
  return sendOne(deps, req, 'broadcast');
}

async function sendOne(deps: SubmissionDeps, req: TransactionalRequest, mailType: MailType): Promise<TransactionalResponse> {
  const channel = await sendChannel(deps.store, req);
  const idem = idempotencyContext({ accountId: req.principal.accountId, key: req.idempotencyKey, header: req.idempotencyHeader, route: ROUTES[mailType], channelId: channel.id, body: req.body });
  const { body } = await deps.idempotency.run(idem, async () => {
    const account = await sendingAccount(deps.store, req.principal.accountId);
    const templates = new TemplateLookup(deps.store, req.principal);
    const { message, response } = await prepareMessage(deps, { channel, account, mailType, templates }, req.body);
    await enqueue(deps, {
      messages: [message],
      sendLimit: sendLimitOf(deps, account),
      idempotency: idem ? { accountId: idem.accountId, key: idem.key, record: deps.idempotency.recordFor(idem, response) } : undefined,
    });
    return response;
  });
  return body;
}

/** Pending accounts: their free quota, checked in the commit (store/messages.ts). */
export function sendLimitOf(deps: SubmissionDeps, account: Account): SendQuota | undefined {
  return account.state === 'pending' ? { accountId: account.id, limit: deps.config.limits.pendingSendLimit } : undefined;
}

export interface PreparedMessage {
  message: AcceptedMessage;
  response: TransactionalResponse;
}

/** A SendMessageRequest's fields, validated and normalized (send-rules.ts). */
interface NormalizedBody {
  from: Address;
  rcpts: Recipients;
  replyTo: Address[];
  headers: Record<string, string>;
  attachments: Attachment[];
  /** The scheduled time as ISO 8601 UTC, when the request asked for one. */
  scheduledAt?: string;
  /** The template as the pipeline takes it (a stored one's version as inline content), when the request has one. */
  template?: ResolvedTemplate;
}

/** Who may receive it: the envelope, the recipients to send to and those suppressed. */
interface RecipientSplit {
  send: string[];
  suppressed: string[];
}

/**
 * Validates one SendMessageRequest, applies recipient policy and suppressions, checks the
 * template (one that does not compile is a 422 here) and the estimated size: everything but the
 * commit, so a batch can commit all its messages at once. The message is committed as its
 * normalized request and composed and signed after the commit (finishing.ts).
 * Throws an AppError (with pointers relative to the request) when the message cannot be sent.
 */
export async function prepareMessage(
  deps: SubmissionDeps,
  ctx: { channel: Channel; account: Account; mailType: MailType; templates: TemplateLookup },
  b: TransactionalBody,
): Promise<PreparedMessage> {
  const { channel, account, mailType } = ctx;
  // A stored template is read first: one the key may not use is 403 whatever else the body has, as its channel would be.
  const resolution = b.template ? await ctx.templates.resolve(b.template, '/template') : undefined;
  const n = await normalizeBody(deps, { accountId: account.id, channel, resolution }, b, mailType);
  const signingDomain = await senderSigningDomain(deps, { accountId: account.id, channel, from: n.from.email });
  const split = await splitRecipients(deps, channel, mailType, n.rcpts);

  const messageId = timeOrderedUuid();
  const messageIdHeader = `<${messageId}@${domainOf(n.from.email)}>`;
  const tracking = mergeTracking(channel.tracking, b.tracking);
  const engagement = await engagementOf(deps, { messageId, channelId: channel.id, mailType, tracking, recipients: split.send, from: n.from.email });
  const template = n.template?.template;
  if (template) await deps.templateCheck.prepare(template);
  const subject = template ? deps.templateCheck.check(template, engagement) : headerSafe(b.subject!);
  const request: BuildRequest = {
    template,
    content: template ? undefined : { subject, html: b.html, text: b.text },
    subject: template ? subject : undefined,
    compose: {
      from: n.from,
      to: n.rcpts.to,
      cc: n.rcpts.cc,
      replyTo: n.replyTo,
      attachments: n.attachments,
      headers: n.headers,
      messageId: messageIdHeader,
      date: new Date().toUTCString(),
      baseBoundary: messageId.replaceAll('-', ''),
    },
    engagement,
  };
  const size = checkedSize(deps, request);
  const message: AcceptedMessage = {
    record: messageRecord({ channel, account, mailType, b, n, split, messageId, messageIdHeader, tracking, subject, size }),
    compose: forStorage(request),
    signingDomain,
    simulatedBounces: channel.deliveryType === 'sandbox' ? simulatedBounces(split.send) : undefined,
  };
  return { message, response: { status: 'accepted', messageId, suppressions: split.suppressed } };
}

/**
 * The stored record of an API message (mailSource "api"), as known at intake: a template's
 * rendered html and text and the exact size come with composition (finishing.ts stores them).
 */
function messageRecord(m: {
  channel: Channel;
  account: Account;
  mailType: MailType;
  b: TransactionalBody;
  n: NormalizedBody;
  split: RecipientSplit;
  messageId: string;
  messageIdHeader: string;
  tracking: Tracking;
  subject: string;
  size: number;
}): AcceptedMessage['record'] {
  const { n } = m;
  const record: AcceptedMessage['record'] = {
    id: m.messageId,
    accountId: m.account.id,
    channelId: m.channel.id,
    mailType: m.mailType,
    mailSource: 'api',
    deliveryType: m.channel.deliveryType,
    createdAt: new Date().toISOString(),
    messageIdHeader: m.messageIdHeader,
    subject: m.subject,
    from: n.from,
    to: n.rcpts.to,
    cc: n.rcpts.cc,
    bcc: n.rcpts.bcc,
    replyTo: n.replyTo,
    tracking: m.tracking,
    tags: m.b.tags ?? [],
    headers: n.headers,
    metadata: normalizeMetadata(m.b.metadata),
    attachments: n.attachments.map((a) => ({ fileName: a.fileName, disposition: a.disposition, size: a.size, contentType: a.contentType })),
    size: m.size,
    recipients: m.split.send,
    suppressed: m.split.suppressed,
    ...(n.scheduledAt !== undefined && { scheduledAt: n.scheduledAt }),
    ...(n.template?.origin && { template: n.template.origin }),
  };
  if (!m.b.template && m.b.text !== undefined) record.text = m.b.text;
  if (!m.b.template && m.b.html !== undefined) record.html = m.b.html;
  return record;
}

/**
 * Every field error of the request at once (one 422 names them all), the sender domain's too
 * when the request has others (sender.ts addSenderFieldError).
 */
async function normalizeBody(
  deps: SubmissionDeps,
  ctx: { accountId: string; channel: Channel; resolution: TemplateResolution | undefined },
  b: TransactionalBody,
  mailType: MailType,
): Promise<NormalizedBody> {
  const errors = new FieldErrorList();
  const fromErrors = errors.size;
  const from = normalizeAddress(b.from, '/from', errors);
  const fromValid = errors.size === fromErrors;
  const rcpts = normalizeRecipients(b, '', errors);
  const replyTo = normalizeAddresses(b.replyTo, '/replyTo', errors);
  checkContent(b, errors);
  const template = resolvedOrErrors(ctx.resolution, errors);
  // Broadcast mail gets List-Unsubscribe from postrider; a custom one may not replace it.
  const headers = normalizeHeaders(b.headers, '/headers', errors, { broadcast: mailType === 'broadcast' });
  const attachments = normalizeAttachments(b.attachments, '/attachments', errors);
  const scheduledMs = checkScheduledAt(b.scheduledAt, { nowMs: deps.now?.() ?? Date.now(), maxDays: deps.config.limits.maxScheduleDays, pointer: '/scheduledAt' }, errors);
  if (fromValid) await addSenderFieldError(deps, { ...ctx, from: from.email }, errors);
  errors.throwIfAny();
  return { from, rcpts, replyTo, headers, attachments, template, ...(scheduledMs !== undefined && { scheduledAt: new Date(scheduledMs).toISOString() }) };
}

/** The operator's deny list refuses the request; suppressed recipients are dropped, unless all are. */
async function splitRecipients(deps: SubmissionDeps, channel: Channel, mailType: MailType, rcpts: Recipients): Promise<RecipientSplit> {
  const envelope = [...new Set([...rcpts.to, ...rcpts.cc, ...rcpts.bcc].map((a) => recipientKey(a.email)))];
  checkDenyList(deps.config.policy.denyRecipients, envelope);
  const { send, suppressed } = await splitSuppressed(deps.store, channel.id, mailType, envelope);
  if (send.length === 0) throw new AppError('recipients_suppressed', `Every recipient is suppressed on this channel: ${suppressed.join(', ')}`);
  return { send, suppressed };
}

/**
 * The message must fit smtp.maxMessageSize like an SMTP submission. It is composed after the
 * commit, so its size is estimated here from what it will hold (estimatedSize); the record
 * carries the estimate until composition stores the exact size.
 */
function checkedSize(deps: SubmissionDeps, req: BuildRequest): number {
  const size = estimatedSize(req);
  const max = deps.config.smtp.maxMessageSize;
  if (size > max) {
    throw new AppError('validation_failed', `The message is about ${size} bytes; at most ${max} are accepted`, {
      errors: { '/attachments': [{ code: 'max_size', message: `the whole message must be at most ${max} bytes` }] },
    });
  }
  return size;
}

/** Base64 in lines of 76 characters and CRLF (RFC 2045 6.8), the largest transfer encoding the composer picks for text. */
const base64Size = (bytes: number): number => Math.ceil(bytes / 57) * 78;

/**
 * An estimate of the composed message's size (before the signature), on the large side: every
 * part as base64 with its part headers, the header fields, the addresses. A template's parts
 * count as their source plus their data (a loop may render more: the estimate can then be
 * short). Tracking adds its links and pixel: a quarter more html.
 */
export function estimatedSize(req: BuildRequest): number {
  const utf8 = (s: string | undefined): number => (s === undefined ? 0 : Buffer.byteLength(s));
  const c = req.compose;
  let size = 1024 + utf8(JSON.stringify([c.from, c.to, c.cc, c.replyTo, c.headers])) + 2 * utf8(req.subject ?? req.content?.subject);
  const t = req.template;
  const data = t ? utf8(JSON.stringify(t.data)) : 0;
  const html = t ? (t.html === undefined ? 0 : utf8(t.html) + data) : utf8(req.content?.html);
  const text = t ? (t.text === undefined ? 0 : utf8(t.text) + data) : utf8(req.content?.text);
  if (html > 0) size += 256 + base64Size(req.engagement ? Math.ceil(html * 1.25) + 512 : html);
  if (text > 0) size += 256 + base64Size(text);
  for (const a of c.attachments ?? []) size += 256 + utf8(a.fileName) * 2 + Math.ceil(a.content.length / 76) * 78;
  return size;
}
