/**
 * POST /send/transactional and /send/broadcast/message (one SendMessageRequest each),
 * ingress-independent: resolve the channel, apply account and recipient policy, validate and
 * normalize, render + compose + sign in the worker pool, then commit durably. The HTTP adapter
 * only maps the result to the wire. transactional-batch.ts reuses prepareMessage.
 */
import { randomUUID } from 'node:crypto';
import type { Address } from '../domain/address.js';
import { domainOf, recipientKey } from '../domain/address.js';
import { AppError, FieldErrorList } from '../domain/errors.js';
import {
  checkContent,
  mergeTracking,
  normalizeAddress,
  normalizeAddresses,
  normalizeAttachments,
  normalizeHeaders,
  normalizeMetadata,
  normalizeRecipients,
  type AttachmentInput,
  type TemplateInput,
} from '../domain/send-rules.js';
import type { Account, Channel, MailType, Principal, Tracking } from '../domain/types.js';
import type { AcceptedMessage, CommitInput } from '../store/messages.js';
import { resolveSendChannel } from './channel.js';
import { idempotencyContext } from './idempotency.js';
import { checkDenyList, sendingAccount, splitSuppressed } from './policy.js';
import { enqueue } from './enqueue.js';
import { engagementFor } from './engagement.js';
import type { SubmissionDeps } from './submission.js';
import { senderKey, simulatedBounces } from './sender.js';

export interface TransactionalBody {
  from: Address;
  to: Address[];
  cc?: Address[];
  bcc?: Address[];
  replyTo?: Address[];
  subject?: string;
  html?: string;
  text?: string;
  template?: TemplateInput;
  tracking?: Partial<Tracking>;
  attachments?: AttachmentInput[];
  tags?: string[];
  headers?: Record<string, string>;
  metadata?: Record<string, string | number | boolean>;
}

export interface TransactionalRequest {
  principal: Principal;
  channelHeader?: string;
  idempotencyKey?: string;
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
  const channel = resolveSendChannel(deps.store, req.principal, req.channelHeader);
  const idem = idempotencyContext({ accountId: req.principal.accountId, key: req.idempotencyKey, route: ROUTES[mailType], channelId: channel.id, body: req.body });
  const { body } = await deps.idempotency.run(idem, async () => {
    const account = sendingAccount(deps.store, req.principal.accountId);
    const { message, response } = await prepareMessage(deps, { channel, account, mailType }, req.body);
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
export function sendLimitOf(deps: SubmissionDeps, account: Account): CommitInput['sendLimit'] {
  return account.state === 'pending' ? { accountId: account.id, limit: deps.config.limits.pendingSendLimit } : undefined;
}

export interface PreparedMessage {
  message: AcceptedMessage;
  response: TransactionalResponse;
}

/**
 * Validates one SendMessageRequest, applies recipient policy and suppressions, renders, composes
 * and signs it: everything but the commit, so a batch can commit all its messages at once.
 * Throws an AppError (with pointers relative to the request) when the message cannot be sent.
 */
export async function prepareMessage(
  deps: SubmissionDeps,
  ctx: { channel: Channel; account: Account; mailType: MailType },
  b: TransactionalBody,
): Promise<PreparedMessage> {
  const { store, config } = deps;
  const { channel, account, mailType } = ctx;
  const errors = new FieldErrorList();
  const from = normalizeAddress(b.from, '/from', errors);
  const rcpts = normalizeRecipients(b, '', errors);
  const replyTo = normalizeAddresses(b.replyTo, '/replyTo', errors);
  checkContent(b, errors);
  // Broadcast mail gets List-Unsubscribe from postrider; a custom one may not replace it.
  const headers = normalizeHeaders(b.headers, '/headers', errors, { broadcast: mailType === 'broadcast' });
  const attachments = normalizeAttachments(b.attachments, '/attachments', errors);
  errors.throwIfAny();

  const dkim = senderKey(deps, { accountId: account.id, channel, from: from.email });
  const envelope = [...new Set([...rcpts.to, ...rcpts.cc, ...rcpts.bcc].map((a) => recipientKey(a.email)))];
  checkDenyList(config.policy.denyRecipients, envelope);
  const { send, suppressed } = splitSuppressed(store, channel.id, mailType, envelope);
  if (send.length === 0) throw new AppError('recipients_suppressed', `Every recipient is suppressed on this channel: ${suppressed.join(', ')}`);

  const messageId = randomUUID();
  const messageIdHeader = `<${messageId}@${domainOf(from.email)}>`;
  const tracking = mergeTracking(channel.tracking, b.tracking);
  const built = await deps.builder.build({
    template: b.template ? { ...b.template, data: b.template.data ?? {} } : undefined,
    content: b.template ? undefined : { subject: b.subject!, html: b.html, text: b.text },
    compose: {
      from,
      to: rcpts.to,
      cc: rcpts.cc,
      replyTo,
      attachments,
      headers,
      messageId: messageIdHeader,
      date: new Date().toUTCString(),
    },
    dkim,
    engagement: engagementFor(deps, { messageId, channelId: channel.id, mailType, tracking, recipients: send, from: from.email }),
  });
  if (built.size > config.smtp.maxMessageSize) {
    throw new AppError('validation_failed', `The message is ${built.size} bytes; at most ${config.smtp.maxMessageSize} are accepted`, {
      errors: { '/attachments': [{ code: 'max_size', message: `the whole message must be at most ${config.smtp.maxMessageSize} bytes` }] },
    });
  }
  const message: AcceptedMessage = {
    record: {
      id: messageId,
      accountId: account.id,
      channelId: channel.id,
      mailType,
      mailSource: 'api',
      deliveryType: channel.deliveryType,
      createdAt: new Date().toISOString(),
      messageIdHeader,
      subject: built.subject,
      from,
      to: rcpts.to,
      cc: rcpts.cc,
      bcc: rcpts.bcc,
      replyTo,
      tracking,
      tags: b.tags ?? [],
      headers,
      metadata: normalizeMetadata(b.metadata),
      attachments: attachments.map((a) => ({ fileName: a.fileName, disposition: a.disposition, size: a.size, contentType: a.contentType })),
      text: built.text,
      html: built.html,
      size: built.size,
      recipients: send,
      suppressed,
    },
    body: built.raw,
    simulatedBounces: channel.deliveryType === 'sandbox' ? simulatedBounces(send) : undefined,
  };
  return { message, response: { status: 'accepted', messageId, suppressions: suppressed } };
}
