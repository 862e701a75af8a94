/**
 * Messages submitted over SMTP (mailSource "smtp"): the same policy and durable enqueue as the
 * HTTP API, but the client brings the MIME message. We check its originator fields strictly
 * (header-senders.ts), re-encode lines over 998 octets (line-length.ts), read what activity shows
 * (raw-content.ts), lift the documented X-Tags / X-Metadata headers into tags and
 * metadata, strip Bcc (RFC 5322 3.6.3), add Message-ID/Date when missing (RFC 5322 3.6, RFC 6409
 * 8.2/8.3), prepend our Received trace field (RFC 5321 4.4, received.ts) and commit before the
 * 250; the DKIM signature with the domain's key (existing signatures are kept) is added after
 * the commit (finishing.ts).
 */
import { domainOf, recipientKey, type Address } from '../domain/address.js';
import libmime from 'libmime';
import { rfc5322Date } from '../domain/date-header.js';
import { crlfLineEnds } from '../domain/line-ends.js';
import { AppError } from '../domain/errors.js';
import { ensureField, fieldValue, headerBlockExceeds, MAX_HEADER_BYTES, joinMessage, malformedFields, removeFields, splitMessage, type SplitMessage } from '../domain/raw-headers.js';
import type { Account } from '../domain/types.js';
import type { AcceptedMessage } from '../store/port/messages.js';
import { checkDenyList, sendingAccount, splitSuppressed } from './policy.js';
import { simulatedBounces } from './sender.js';
import { enqueue } from './enqueue.js';
import { checkHeaderSenders } from './header-senders.js';
import { fitLineLength } from './line-length.js';
import { parseMetadata, parseTags } from './x-headers.js';
import { rawContent, type RawContent } from './raw-content.js';
import { receivedField, type ReceivedTrace } from './received.js';
import type { SubmissionDeps } from './deps.js';
import type { Submitter } from './submitter.js';
import { timeOrderedUuid } from '../domain/uuid.js';

/** An SMTP transaction at DATA: who submits, the RCPT TO addresses and the message as received. */
export interface RawSubmission extends Submitter {
  /** RCPT TO addresses, already normalized and policy-checked one by one (envelope.ts). */
  recipients: string[];
  raw: Buffer;
  /** The session as the Received field records it, or `local` for a message this daemon wrote. */
  trace: ReceivedTrace;
  /** A TLS-RPT report (tls-rpt/mailer.ts): kept on the record for delivery (MessageRecord.tlsReport). */
  tlsReport?: boolean;
}

export interface RawAccepted {
  messageId: string;
  suppressed: string[];
}

/** The message as the client sent it, checked and with its long lines re-encoded. */
interface CheckedMessage {
  account: Account;
  msg: SplitMessage;
  /** The message as received (before fitLineLength), for raw-content.ts. */
  received: SplitMessage;
  from: Address;
  /** The d= domain it is signed for after the commit (header-senders.ts). */
  signingDomain: string | undefined;
}

export async function submitRaw(deps: SubmissionDeps, sub: RawSubmission): Promise<RawAccepted> {
  // Checked and signed with the line ends it is delivered with (domain/line-ends.ts).
  const raw = crlfLineEnds(sub.raw);
  const checked = await checkMessage(deps, sub, raw);
  const parsed = await rawContent(raw, checked.received, (bytes) => deps.builder.parseContent(bytes));
  // Mail libraries RFC 2047-encode header values with quotes or braces (nodemailer turns
  // {"a":"1"} into =?UTF-8?Q?...?=); mailparser leaves unknown fields encoded, so decode here.
  const tags = parseTags(decodedField(checked.msg, 'X-Tags'));
  const metadata = parseMetadata(decodedField(checked.msg, 'X-Metadata'));
  const recipients = await envelopeRecipients(deps, sub);
  const messageId = timeOrderedUuid();
  const { messageIdHeader, body } = finishMessage(checked, messageId, sub.trace);
  const { account } = checked;
  await enqueue(deps, {
    messages: [
      {
        record: messageRecord({ sub, checked, parsed, recipients, messageId, messageIdHeader, size: body.byteLength, tags, metadata }),
        body,
        signingDomain: checked.signingDomain,
        simulatedBounces: sub.channel.deliveryType === 'sandbox' ? simulatedBounces(recipients.send) : undefined,
      },
    ],
    sendLimit: account.state === 'pending' ? { accountId: account.id, limit: deps.config.limits.pendingSendLimit } : undefined,
  });
  return { messageId, suppressed: recipients.suppressed };
}

/** The account may send, the header block is well formed and its originators are ours. */
async function checkMessage(deps: SubmissionDeps, sub: RawSubmission, raw: Buffer): Promise<CheckedMessage> {
  const account = await sendingAccount(deps.store, sub.principal.accountId);
  if (headerBlockExceeds(raw, MAX_HEADER_BYTES)) throw new AppError('validation_failed', `The header block is longer than ${MAX_HEADER_BYTES} octets`);
  const msg = splitMessage(raw);
  const bad = malformedFields(msg);
  if (bad.length > 0) throw new AppError('validation_failed', `Malformed header line: ${bad[0]}`);
  // What recipients see and what DMARC aligns on must be ours, every address of it.
  const { from, signingDomain } = await checkHeaderSenders(deps, { accountId: account.id, channel: sub.channel, msg });
  return { account, msg: fitLineLength(msg), received: msg, from, signingDomain };
}

/**
 * The envelope once more, as a whole: RCPT TO checked each address, but the deny list or a
 * suppression may have changed while the client sent the message.
 */
async function envelopeRecipients(deps: SubmissionDeps, sub: RawSubmission): Promise<{ envelope: string[]; send: string[]; suppressed: string[] }> {
  const envelope = [...new Set(sub.recipients.map(recipientKey))];
  checkDenyList(deps.config.policy.denyRecipients, envelope);
  const { send, suppressed } = await splitSuppressed(deps.store, sub.channel.id, 'transactional', envelope);
  if (send.length === 0) throw new AppError('recipients_suppressed', 'Every recipient is suppressed on this channel');
  return { envelope, send, suppressed };
}

/**
 * Our header changes (RFC 5322 3.6.3 Bcc out; RFC 6409 8.2/8.3 Message-ID and Date in; RFC 5321
 * 4.4 Received on top). They come after checkMessage, so the From and header-block checks see the
 * client's fields only; the DKIM signature, added after the commit, is computed over this result.
 */
function finishMessage(checked: CheckedMessage, messageId: string, trace: ReceivedTrace): { messageIdHeader: string; body: Uint8Array } {
  let msg = checked.msg;
  const now = new Date();
  const messageIdHeader = fieldValue(msg, 'Message-ID') ?? `<${messageId}@${domainOf(checked.from.email)}>`;
  msg = removeFields(msg, ['X-Tags', 'X-Metadata', 'Bcc']);
  msg = ensureField(msg, 'Message-ID', messageIdHeader);
  msg = ensureField(msg, 'Date', rfc5322Date(now));
  msg = { ...msg, fields: [receivedField(trace, messageId, now, msg.eol), ...msg.fields] };
  return { messageIdHeader, body: joinMessage(msg) };
}

/** The stored record: what activity shows comes from the parsed message. */
function messageRecord(m: {
  sub: RawSubmission;
  checked: CheckedMessage;
  parsed: RawContent;
  recipients: { envelope: string[]; send: string[]; suppressed: string[] };
  messageId: string;
  messageIdHeader: string;
  size: number;
  tags: string[];
  metadata: Record<string, string>;
}): AcceptedMessage['record'] {
  const { sub, parsed } = m;
  const { to, cc } = parsed;
  const visible = new Set([...to, ...cc].map((a) => recipientKey(a.email)));
  return {
    id: m.messageId,
    accountId: m.checked.account.id,
    channelId: sub.channel.id,
    mailType: 'transactional',
    mailSource: 'smtp',
    deliveryType: sub.channel.deliveryType,
    createdAt: new Date().toISOString(),
    messageIdHeader: m.messageIdHeader,
    subject: parsed.subject,
    from: m.checked.from,
    to,
    cc,
    // Envelope recipients not named in To/Cc were blind copies (RFC 5322 3.6.3).
    bcc: m.recipients.envelope.filter((r) => !visible.has(r)).map((email) => ({ email })),
    replyTo: parsed.replyTo,
    tracking: sub.channel.tracking,
    tags: m.tags,
    headers: {},
    metadata: m.metadata,
    attachments: parsed.attachments,
    text: parsed.text,
    html: parsed.html,
    size: m.size,
    recipients: m.recipients.send,
    suppressed: m.recipients.suppressed,
    ...(sub.tlsReport ? { tlsReport: true as const } : {}),
  };
}

function decodedField(msg: SplitMessage, name: string): string | undefined {
  const v = fieldValue(msg, name);
  return v === undefined ? undefined : libmime.decodeWords(v).trim();
}
