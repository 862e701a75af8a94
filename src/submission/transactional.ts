/**
 * POST /send/transactional, ingress-independent: resolve the channel, apply account and
 * recipient policy, validate and normalize, render + compose + sign in the worker pool, then
 * commit durably. The HTTP adapter only maps the result to the wire.
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
import type { Channel, Principal, Tracking } from '../domain/types.js';
import { resolveSendChannel } from './channel.js';
import { idempotencyContext, type IdempotencyContext } from './idempotency.js';
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

export async function sendTransactional(deps: SubmissionDeps, req: TransactionalRequest): Promise<TransactionalResponse> {
  const channel = resolveSendChannel(deps.store, req.principal, req.channelHeader);
  const idem = idempotencyContext({ accountId: req.principal.accountId, key: req.idempotencyKey, route: 'send/transactional', channelId: channel.id, body: req.body });
  const { body } = await deps.idempotency.run(idem, () => acceptTransactional(deps, channel, req, idem));
  return body;
}

async function acceptTransactional(
  deps: SubmissionDeps,
  channel: Channel,
  req: TransactionalRequest,
  idem: IdempotencyContext | undefined,
): Promise<TransactionalResponse> {
  const { store, config } = deps;
  const account = sendingAccount(store, req.principal.accountId);
  const b = req.body;
  const errors = new FieldErrorList();
  const from = normalizeAddress(b.from, '/from', errors);
  const rcpts = normalizeRecipients(b, '', errors);
  const replyTo = normalizeAddresses(b.replyTo, '/replyTo', errors);
  checkContent(b, errors);
  const headers = normalizeHeaders(b.headers, '/headers', errors);
  const attachments = normalizeAttachments(b.attachments, '/attachments', errors);
  errors.throwIfAny();

  const dkim = senderKey(deps, { accountId: account.id, channel, from: from.email });
  const envelope = [...new Set([...rcpts.to, ...rcpts.cc, ...rcpts.bcc].map((a) => recipientKey(a.email)))];
  checkDenyList(config.policy.denyRecipients, envelope);
  const { send, suppressed } = splitSuppressed(store, channel.id, 'transactional', envelope);
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
    engagement: engagementFor(deps, { messageId, channelId: channel.id, mailType: 'transactional', tracking, recipients: send, from: from.email }),
  });
  if (built.size > config.smtp.maxMessageSize) {
    throw new AppError('validation_failed', `The message is ${built.size} bytes; at most ${config.smtp.maxMessageSize} are accepted`, {
      errors: { '/attachments': [{ code: 'max_size', message: `the whole message must be at most ${config.smtp.maxMessageSize} bytes` }] },
    });
  }
  const response: TransactionalResponse = { status: 'accepted', messageId, suppressions: suppressed };
  await enqueue(deps, {
    messages: [
      {
        record: {
          id: messageId,
          accountId: account.id,
          channelId: channel.id,
          mailType: 'transactional',
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
      },
    ],
    sendLimit: account.state === 'pending' ? { accountId: account.id, limit: config.limits.pendingSendLimit } : undefined,
    idempotency: idem ? { accountId: idem.accountId, key: idem.key, record: deps.idempotency.recordFor(idem, response) } : undefined,
  });
  return response;
}
