/**
 * The JSON an inbound route's URL receives for one message (issue 33): its envelope, the fields
 * an application needs without parsing mail (From, To, Subject, the reply's new text…), every
 * header field, the attachments, and the authentication verdicts (verify.ts).
 *
 * A function of the stored message and what was decided about it, so a retried POST carries the
 * same payload. It never throws on the message's content: what could not be read is absent or
 * null, and `parseError` says why (parse-received.ts).
 */
import type { ParsedMail } from 'mailparser';
import { DEFAULT_PARSE_LIMITS, parseReceived, type ParseLimits } from './parse-received.js';
import {
  addressesOf,
  attachmentList,
  dateOf,
  headerList,
  subjectOf,
  type PayloadAddress,
  type PayloadAttachment,
  type PayloadHeader,
} from './payload-fields.js';
import { strippedTextReply } from './stripped-reply.js';
import type { AuthVerdicts } from './verify.js';

export interface InboundPayloadInput {
  id: string;
  routeId: string;
  receivedAt: Date;
  envelope: { mailFrom: string; rcptTo: string[] };
  raw: Buffer;
  auth: AuthVerdicts;
  /** What followed "+" in the recipient's local part (support+4711@ → "4711"), or null. */
  mailboxHash: string | null;
  /** Attachments up to this many bytes (decoded) are inlined in base64; larger ones get `url`. */
  attachmentInlineMax: number;
  /** The authenticated link to the attachment at this index of `attachments`. */
  attachmentUrl: (index: number) => string;
  limits?: ParseLimits;
}

export interface InboundPayload {
  id: string;
  routeId: string;
  receivedAt: string;
  envelope: { mailFrom: string; rcptTo: string[] };
  from: PayloadAddress | null;
  to: PayloadAddress[];
  cc: PayloadAddress[];
  replyTo: PayloadAddress[];
  subject: string | null;
  date: string | null;
  messageId: string | null;
  inReplyTo: string | null;
  references: string[];
  mailboxHash: string | null;
  text: string | null;
  html: string | null;
  strippedTextReply: string | null;
  headers: PayloadHeader[];
  attachments: PayloadAttachment[];
  auth: { spf: AuthVerdicts['spf']; dkim: AuthVerdicts['dkim']; dmarc: AuthVerdicts['dmarc']; arc: AuthVerdicts['arc'] };
  /** Why the body (or the whole message) was not read, when it was not: a limit, or broken MIME. */
  parseError: string | null;
}

/** The payload of one received message. */
export async function inboundPayload(input: InboundPayloadInput): Promise<InboundPayload> {
  const { mail, problem } = await parseReceived(input.raw, input.limits ?? DEFAULT_PARSE_LIMITS);
  const headers = headerList(mail);
  const text = mail?.text ?? null;
  return {
    id: input.id,
    routeId: input.routeId,
    receivedAt: input.receivedAt.toISOString(),
    envelope: { mailFrom: input.envelope.mailFrom, rcptTo: [...input.envelope.rcptTo] },
    ...(await addressFields(mail, headers)),
    // As `headers` reads it (8-bit text that is not UTF-8 read as windows-1252), mailparser's where it listed no Subject.
    subject: subjectOf(headers) ?? mail?.subject ?? null,
    date: dateOf(headers),
    messageId: mail?.messageId ?? null,
    inReplyTo: mail?.inReplyTo ?? null,
    references: references(mail),
    mailboxHash: input.mailboxHash,
    text,
    html: typeof mail?.html === 'string' ? mail.html : null,
    strippedTextReply: text === null ? null : strippedTextReply(text),
    headers,
    attachments: attachmentList(mail?.attachments ?? [], { inlineMax: input.attachmentInlineMax, url: input.attachmentUrl }),
    auth: { spf: input.auth.spf, dkim: input.auth.dkim, dmarc: input.auth.dmarc, arc: input.auth.arc },
    parseError: problem,
  };
}

/**
 * From, To, Cc and Reply-To as `headers` reads them (8-bit text that is not UTF-8 read as
 * windows-1252), parsed as mailparser parses them (encoded-words in names decoded, RFC 2047).
 * The import costs nothing here: parseReceived loaded mailparser to read this message.
 */
async function addressFields(mail: ParsedMail | null, headers: readonly PayloadHeader[]): Promise<Pick<InboundPayload, 'from' | 'to' | 'cc' | 'replyTo'>> {
  const { parseAddressHeader } = await import('mailparser');
  const parse = (values: string[]) => parseAddressHeader(values);
  return {
    from: addressesOf(headers, 'from', { all: false, parse, parsed: mail?.from })[0] ?? null,
    to: addressesOf(headers, 'to', { all: true, parse, parsed: mail?.to }),
    cc: addressesOf(headers, 'cc', { all: true, parse, parsed: mail?.cc }),
    replyTo: addressesOf(headers, 'reply-to', { all: false, parse, parsed: mail?.replyTo }),
  };
}

function references(mail: ParsedMail | null): string[] {
  const value = mail?.references;
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
}
