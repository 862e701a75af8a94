/**
 * Messages submitted over SMTP (mailSource "smtp"): the same policy and durable enqueue as the
 * HTTP API, but the client brings the MIME message. We check its originator fields strictly
 * (header-senders.ts), re-encode lines over 998 octets (line-length.ts), parse it (mailparser)
 * for what activity shows, lift the documented X-Tags / X-Metadata headers into tags and
 * metadata, strip Bcc (RFC 5322 3.6.3), add Message-ID/Date when missing (RFC 5322 3.6, RFC 6409
 * 8.2/8.3), sign with the domain's DKIM key (existing signatures are kept) and commit before
 * the 250.
 */
import { randomUUID } from 'node:crypto';
import { simpleParser, type AddressObject } from 'mailparser';
import { domainOf, recipientKey, type Address } from '../domain/address.js';
import libmime from 'libmime';
import { AppError } from '../domain/errors.js';
import { ensureField, fieldValue, joinMessage, malformedFields, removeFields, splitMessage } from '../domain/raw-headers.js';
import type { Channel, Principal } from '../domain/types.js';
import { checkDenyList, sendingAccount, splitSuppressed } from './policy.js';
import { simulatedBounces } from './sender.js';
import { enqueue } from './enqueue.js';
import { checkHeaderSenders } from './header-senders.js';
import { fitLineLength } from './line-length.js';
import type { SubmissionDeps } from './submission.js';

export interface RawSubmission {
  principal: Principal;
  channel: Channel;
  /** RCPT TO addresses, already normalized and policy-checked one by one. */
  recipients: string[];
  raw: Buffer;
}

export async function submitRaw(deps: SubmissionDeps, sub: RawSubmission): Promise<{ messageId: string; suppressed: string[] }> {
  const { store, config } = deps;
  const account = sendingAccount(store, sub.principal.accountId);
  let msg = splitMessage(sub.raw);
  const bad = malformedFields(msg);
  if (bad.length > 0) throw new AppError('validation_failed', `Malformed header line: ${bad[0]}`);

  // What recipients see and what DMARC aligns on must be ours, every address of it.
  const { from, dkim } = checkHeaderSenders(deps, { accountId: account.id, channel: sub.channel, msg });
  msg = fitLineLength(msg);

  const parsed = await simpleParser(sub.raw, { skipHtmlToText: true, skipTextToHtml: true, skipTextLinks: true });

  // Mail libraries RFC 2047-encode header values with quotes or braces (nodemailer turns
  // {"a":"1"} into =?UTF-8?Q?...?=); mailparser leaves unknown fields encoded, so decode here.
  const tags = parseTags(decodedField(msg, 'X-Tags'));
  const metadata = parseMetadata(decodedField(msg, 'X-Metadata'));
  const envelope = [...new Set(sub.recipients.map(recipientKey))];
  checkDenyList(config.policy.denyRecipients, envelope);
  const { send, suppressed } = splitSuppressed(store, sub.channel.id, 'transactional', envelope);
  if (send.length === 0) throw new AppError('recipients_suppressed', 'Every recipient is suppressed on this channel');

  const messageId = randomUUID();
  const messageIdHeader = fieldValue(msg, 'Message-ID') ?? `<${messageId}@${domainOf(from.email)}>`;
  msg = removeFields(msg, ['X-Tags', 'X-Metadata', 'Bcc']);
  msg = ensureField(msg, 'Message-ID', messageIdHeader);
  msg = ensureField(msg, 'Date', new Date().toUTCString());
  const unsigned = joinMessage(msg);
  const signed = dkim ? await deps.builder.sign({ raw: unsigned, dkim }) : unsigned;

  const to = addresses(parsed.to);
  const cc = addresses(parsed.cc);
  const visible = new Set([...to, ...cc].map((a) => recipientKey(a.email)));
  const attachments = parsed.attachments.map((a) => ({
    fileName: a.filename ?? 'attachment',
    disposition: (a.contentDisposition === 'inline' ? 'inline' : 'attachment') as 'inline' | 'attachment',
    size: a.size,
    contentType: a.contentType,
  }));
  await enqueue(deps, {
    messages: [
      {
        record: {
          id: messageId,
          accountId: account.id,
          channelId: sub.channel.id,
          mailType: 'transactional',
          mailSource: 'smtp',
          deliveryType: sub.channel.deliveryType,
          createdAt: new Date().toISOString(),
          messageIdHeader,
          subject: parsed.subject ?? '',
          from,
          to,
          cc,
          // Envelope recipients not named in To/Cc were blind copies (RFC 5322 3.6.3).
          bcc: envelope.filter((r) => !visible.has(r)).map((email) => ({ email })),
          replyTo: addresses(parsed.replyTo),
          tracking: sub.channel.tracking,
          tags,
          headers: {},
          metadata,
          attachments,
          text: parsed.text,
          html: typeof parsed.html === 'string' ? parsed.html : undefined,
          size: signed.byteLength,
          recipients: send,
          suppressed,
        },
        body: signed,
        simulatedBounces: sub.channel.deliveryType === 'sandbox' ? simulatedBounces(send) : undefined,
      },
    ],
    sendLimit: account.state === 'pending' ? { accountId: account.id, limit: config.limits.pendingSendLimit } : undefined,
  });
  return { messageId, suppressed };
}

function decodedField(msg: ReturnType<typeof splitMessage>, name: string): string | undefined {
  const v = fieldValue(msg, name);
  return v === undefined ? undefined : libmime.decodeWords(v).trim();
}

function addresses(obj: AddressObject | AddressObject[] | undefined): Address[] {
  const list = Array.isArray(obj) ? obj : obj ? [obj] : [];
  return list.flatMap((o) => o.value).flatMap((a) => (a.address ? [a.name ? { email: a.address, name: a.name } : { email: a.address }] : []));
}

/** X-Tags: comma-separated, same rules as the API's tags (at most 5, [A-Za-z0-9_-]{1,100}). */
export function parseTags(value: string | undefined): string[] {
  if (!value) return [];
  const tags = value.split(',').map((t) => t.trim()).filter(Boolean);
  const bad = tags.find((t) => !/^[A-Za-z0-9_-]{1,100}$/.test(t));
  if (bad !== undefined) throw new AppError('validation_failed', `X-Tags: "${bad.slice(0, 40)}" is not a valid tag (letters, digits, - and _, at most 100)`);
  if (tags.length > 5) throw new AppError('validation_failed', 'X-Tags: at most 5 tags');
  return [...new Set(tags)];
}

/** X-Metadata: a JSON object of at most 10 fields (keys up to 50, values up to 100 characters). */
export function parseMetadata(value: string | undefined): Record<string, string> {
  if (!value) return {};
  let obj: unknown;
  try {
    obj = JSON.parse(value);
  } catch {
    throw new AppError('validation_failed', 'X-Metadata must be a JSON object');
  }
  if (!obj || typeof obj !== 'object' || Array.isArray(obj)) throw new AppError('validation_failed', 'X-Metadata must be a JSON object');
  const entries = Object.entries(obj as Record<string, unknown>);
  if (entries.length > 10) throw new AppError('validation_failed', 'X-Metadata: at most 10 fields');
  const out: Record<string, string> = {};
  for (const [k, v] of entries) {
    if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') throw new AppError('validation_failed', `X-Metadata: "${k}" must be a string, number or boolean`);
    if (k.length > 50 || String(v).length > 100) throw new AppError('validation_failed', `X-Metadata: "${k}" is too long (keys 50, values 100 characters)`);
    // Same rule as the API's metadata: no control characters (CR/LF above all) in keys or values.
    if (/[\u0000-\u001f\u007f]/.test(k + String(v))) throw new AppError('validation_failed', 'X-Metadata: keys and values must not contain control characters');
    out[k] = String(v);
  }
  return out;
}
