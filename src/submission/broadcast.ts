/**
 * POST /send/broadcast: one template, many messages (spec 4.11). Every entry is validated and
 * the whole request is stored durably before the 200; the BroadcastExpander then commits the
 * entries as messages in batches, each as its normalized request (broadcast-entry.ts), and the
 * finishing stage renders, composes and DKIM-signs them after their commit (finishing.ts). So a
 * 10,000-entry broadcast answers in about the time it takes to validate and store it, and
 * memory does not grow with the count.
 */
import { randomUUID } from 'node:crypto';
import type { Address } from '../domain/address.js';
import { recipientKey } from '../domain/address.js';
import { FieldErrorList } from '../domain/errors.js';
import { checkScheduledAt } from '../domain/schedule.js';
import {
  checkTemplateInput,
  mergeTracking,
  normalizeAddress,
  normalizeAddresses,
  normalizeAttachments,
  normalizeHeaders,
  normalizeMetadata,
  normalizeRecipients,
  LIMITS,
  type Attachment,
  type AttachmentInput,
  type SendTemplateInput,
  type TemplateInput,
} from '../domain/send-rules.js';
import type { TemplateOrigin } from '../domain/template.js';
import type { Channel, Tracking } from '../domain/types.js';
import type { BroadcastRecord } from '../store/port/broadcasts.js';
import { sendChannel } from './channel.js';
import type { SenderHeaders } from './sender-headers.js';
import { idempotencyContext } from './idempotency.js';
import { checkDenyList, sendingAccount } from './policy.js';
import { addSenderFieldErrorOf, senderKey } from './sender.js';
import type { SubmissionDeps } from './deps.js';
import { resolvedOrErrors, TemplateLookup, type ResolvedTemplate, type TemplateResolution } from './stored-template.js';
import { assertRenderedSubject } from './template-check.js';

export interface BroadcastEntryInput {
  to?: Address[];
  cc?: Address[];
  bcc?: Address[];
  tags?: string[];
  headers?: Record<string, string>;
  metadata?: Record<string, string | number | boolean>;
  data?: Record<string, unknown>;
}

export interface BroadcastBody {
  from: Address;
  /** Inline, or a stored template's reference (stored-template.ts), resolved once for the whole broadcast. */
  template: SendTemplateInput;
  messages: BroadcastEntryInput[];
  replyTo?: Address[];
  tracking?: Partial<Tracking>;
  attachments?: AttachmentInput[];
  tags?: string[];
  headers?: Record<string, string>;
  metadata?: Record<string, string | number | boolean>;
  /** RFC 3339 with offset: no message of the broadcast is delivered before (domain/schedule.ts). */
  scheduledAt?: string;
}

/** What every message of the broadcast shares, as stored with the broadcast. */
export interface BroadcastCommon {
  from: Address;
  replyTo: Address[];
  /** Inline content, a stored template's version included: what was resolved at the send is what every entry gets. */
  template: TemplateInput;
  /** The stored template and version the content came from (each message's record names it). */
  templateOrigin?: TemplateOrigin;
  attachments: Attachment[];
  tracking: Tracking;
  deliveryType: 'live' | 'sandbox';
  /** Broadcast-level tags, headers and metadata as sent (GET /broadcasts/{id}); absent on older records. */
  tags?: string[];
  headers?: Record<string, string>;
  metadata?: Record<string, string>;
}

/** One entry, normalized, with the broadcast-level tags/headers/metadata merged in. */
export interface BroadcastEntry {
  to: Address[];
  cc: Address[];
  bcc: Address[];
  tags: string[];
  headers: Record<string, string>;
  metadata: Record<string, string>;
  data: Record<string, unknown>;
}

/** The body with the sender's principal and headers (sender-headers.ts). */
export interface BroadcastRequest extends SenderHeaders {
  body: BroadcastBody;
}

export interface BroadcastResponse {
  status: 'accepted';
  broadcastId: string;
}

/** The request, validated: what every message shares and the normalized entries. */
interface NormalizedBroadcast {
  from: Address;
  replyTo: Address[];
  attachments: Attachment[];
  headers: Record<string, string>;
  metadata: Record<string, string>;
  entries: BroadcastEntry[];
  template: ResolvedTemplate;
  /** The scheduled time as ISO 8601 UTC, when the request asked for one. */
  scheduledAt?: string;
}

export async function sendBroadcast(
  deps: SubmissionDeps & { onAccepted: () => void },
  req: BroadcastRequest,
): Promise<BroadcastResponse> {
  const channel = await sendChannel(deps.store, req);
  const idem = idempotencyContext({ accountId: req.principal.accountId, key: req.idempotencyKey, header: req.idempotencyHeader, route: 'send/broadcast', channelId: channel.id, body: req.body });
  const { body, replayed } = await deps.idempotency.run(idem, async () => {
    const account = await sendingAccount(deps.store, req.principal.accountId);
    const b = req.body;
    // Read first: a stored template the key may not use is 403, as its channel would be (stored-template.ts).
    const resolution = await new TemplateLookup(deps.store, req.principal).resolve(b.template, '/template');
    const n = await normalizeBroadcast(deps, { accountId: account.id, channel, resolution }, b);
    await senderKey(deps, { accountId: account.id, channel, from: n.from.email });
    const recipients = n.entries.flatMap((e) => [...e.to, ...e.cc, ...e.bcc].map((a) => recipientKey(a.email)));
    checkDenyList(deps.config.policy.denyRecipients, [...new Set(recipients)]);
    const common: BroadcastCommon = {
      from: n.from,
      replyTo: n.replyTo,
      template: n.template.template,
      ...(n.template.origin && { templateOrigin: n.template.origin }),
      attachments: n.attachments,
      tracking: mergeTracking(channel.tracking, b.tracking),
      deliveryType: channel.deliveryType,
      tags: b.tags ?? [],
      headers: n.headers,
      metadata: n.metadata,
    };
    await checkRenders(deps, n.template.template, n);
    const record = broadcastRecord({ accountId: account.id, channelId: channel.id, total: n.entries.length, common, scheduledAt: n.scheduledAt });
    const response: BroadcastResponse = { status: 'accepted', broadcastId: record.id };
    await deps.store.broadcasts.accept({
      record,
      entries: n.entries,
      sendLimit: account.state === 'pending' ? { accountId: account.id, limit: deps.config.limits.pendingSendLimit, recipients: recipients.length } : undefined,
      idempotency: idem ? { accountId: idem.accountId, key: idem.key, record: deps.idempotency.recordFor(idem, response) } : undefined,
    });
    return response;
  });
  if (!replayed) deps.onAccepted();
  return body;
}

/**
 * Every field error of the request and of its entries at once (one 422 names them all), the
 * sender domain's too when the request has others (sender.ts addSenderFieldError).
 */
async function normalizeBroadcast(
  deps: SubmissionDeps,
  ctx: { accountId: string; channel: Channel; resolution: TemplateResolution },
  b: BroadcastBody,
): Promise<NormalizedBroadcast> {
  const errors = new FieldErrorList();
  const from = normalizeAddress(b.from, '/from', errors);
  const replyTo = normalizeAddresses(b.replyTo, '/replyTo', errors);
  checkTemplateInput(b.template, '/template', errors);
  const template = resolvedOrErrors(ctx.resolution, errors);
  if (b.messages.length === 0) errors.add('/messages', 'min_items', 'must have at least 1 item');
  const attachments = normalizeAttachments(b.attachments, '/attachments', errors);
  const headers = normalizeHeaders(b.headers, '/headers', errors, { broadcast: true });
  const metadata = normalizeMetadata(b.metadata);
  const entries = b.messages.map((m, i) => normalizeEntry(m, i, { tags: b.tags ?? [], headers, metadata }, errors));
  const scheduledMs = checkScheduledAt(b.scheduledAt, { nowMs: deps.now?.() ?? Date.now(), maxDays: deps.config.limits.maxScheduleDays, pointer: '/scheduledAt' }, errors);
  await addSenderFieldErrorOf(deps, { ...ctx, from: b.from }, errors);
  errors.throwIfAny();
  // Defined once there is no error: an inline template, or a stored one found (else its field error was thrown).
  return { from, replyTo, attachments, headers, metadata, entries, template: template!, ...(scheduledMs !== undefined && { scheduledAt: new Date(scheduledMs).toISOString() }) };
}

/**
 * Renders the first entry now so template syntax errors, and a subject that renders too long,
 * are a 422, not a silent failure later (an entry whose own data does either is a failure row).
 */
async function checkRenders(deps: SubmissionDeps, template: TemplateInput, n: NormalizedBroadcast): Promise<void> {
  const first = n.entries[0];
  const built = await deps.builder.build({
    template: { ...template, data: { ...(template.data ?? {}), ...first.data } },
    compose: { from: n.from, to: first.to, messageId: '<check@postrider.invalid>', date: new Date().toUTCString() },
  });
  assertRenderedSubject(built.subject);
}

/** A new broadcast, before the expander has committed any of its messages. */
function broadcastRecord(q: { accountId: string; channelId: string; total: number; common: BroadcastCommon; scheduledAt?: string }): BroadcastRecord<BroadcastCommon> {
  return {
    id: randomUUID(),
    accountId: q.accountId,
    channelId: q.channelId,
    createdAt: new Date().toISOString(),
    state: 'expanding',
    total: q.total,
    cursor: 0,
    messages: 0,
    skipped: 0,
    failed: 0,
    suppressed: 0,
    ...(q.scheduledAt !== undefined && { scheduledAt: q.scheduledAt }),
    common: q.common,
  };
}

function normalizeEntry(
  m: BroadcastEntryInput,
  i: number,
  shared: { tags: string[]; headers: Record<string, string>; metadata: Record<string, string> },
  errors: FieldErrorList,
): BroadcastEntry {
  const base = `/messages/${i}`;
  const r = normalizeRecipients(m, base, errors);
  const tags = [...new Set([...shared.tags, ...(m.tags ?? [])])];
  if (tags.length > 5) errors.add(`${base}/tags`, 'max_items', 'broadcast and message tags together may be at most 5');
  const headers = { ...shared.headers, ...normalizeHeaders(m.headers, `${base}/headers`, errors, { broadcast: true }) };
  const size = Object.entries(headers).reduce((n, [k, v]) => n + k.length + v.length, 0);
  if (size > LIMITS.headersTotalChars) errors.add(`${base}/headers`, 'max_length', `headers of a message may have at most ${LIMITS.headersTotalChars} characters in total`);
  const metadata = { ...shared.metadata, ...normalizeMetadata(m.metadata) };
  if (Object.keys(metadata).length > 10) errors.add(`${base}/metadata`, 'max_properties', 'broadcast and message metadata together may have at most 10 fields');
  return { ...r, tags, headers, metadata, data: m.data ?? {} };
}

