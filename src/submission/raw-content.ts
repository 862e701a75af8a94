/**
 * What activity shows of a message submitted over SMTP (subject, To/Cc/Reply-To, text, html,
 * attachments), read from the MIME the client sent. A full MIME parse (mailparser) costs about
 * 1 ms per message on the main thread, before the 250, for every message, while nearly every
 * client sends one of two shapes: a single text part, or multipart/alternative with one
 * text/plain and one text/html part (RFC 2046 5.1.4). Those are read here directly from the
 * header block and the part boundaries, giving the same values mailparser gives; anything else
 * (attachments, other charsets, encoded words in addresses, groups, 8-bit header bytes,
 * format=flowed, nesting) goes to mailparser as before. raw-content.test.ts compares the two.
 */
import type { AddressObject } from 'mailparser';
import libmime from 'libmime';
import addressparser from 'nodemailer/lib/addressparser/index.js';
import type { Address } from '../domain/address.js';
import { hasNonAscii } from '../domain/ascii.js';
import { fewMimeParts } from '../domain/mime-parts.js';
import { foldFields, type SplitMessage } from '../domain/raw-headers.js';
import { trimBlanksEnd, trimLineEndBlanks } from '../domain/white-space.js';
import type { AcceptedMessage } from '../store/port/messages.js';
import { TaskError } from '../workers/errors.js';
import { toAppError } from './task-errors.js';

type Record_ = AcceptedMessage['record'];
export type RawContent = Pick<Record_, 'subject' | 'to' | 'cc' | 'replyTo' | 'attachments' | 'text' | 'html'>;

/**
 * Messages up to this size that the fast path does not read are parsed on the main thread: a
 * message with a small attachment takes about 1 ms, less than a hop to a worker and back with
 * its bytes. A larger one is parsed by `elsewhere` (a worker thread): mailparser decodes every
 * attachment, 430 ms at once on this thread for an 18 MB one (bench/RESULTS.md, large messages).
 * So is a small one of many parts (domain/mime-parts.ts).
 */
export const PARSE_HERE_MAX_BYTES = 64 * 1024;

/** The content of `raw` (whose header block and body `msg` holds, as received). */
export async function rawContent(raw: Buffer, msg: SplitMessage, elsewhere: (raw: Buffer) => Promise<RawContent>): Promise<RawContent> {
  const fast = fastContent(msg);
  if (fast) return fast;
  if (raw.length > PARSE_HERE_MAX_BYTES || !fewMimeParts(raw)) return elsewhere(raw);
  return parsedContent(raw).catch((err: unknown) => {
    throw toAppError(err, '');
  });
}

/**
 * Most MIME entities of a message mailparser reads (mailsplit's maxChildNodes; its default): one
 * with more is refused, validation_failed (550 5.6.0), as it would be on every try.
 */
export const MAX_MIME_PARTS = 1000;

/** mailparser's reading, for every shape the fast path does not take (on this thread or a worker's). */
export async function parsedContent(raw: Buffer): Promise<RawContent> {
  // Imported on first use: mailparser is only the fallback for unusual messages (fastContent
  // reads the common shapes), and loading it delays every start by its module load time.
  const { simpleParser } = await import('mailparser');
  const parsed = await simpleParser(raw, { skipHtmlToText: true, skipTextToHtml: true, skipTextLinks: true, maxChildNodes: MAX_MIME_PARTS }).catch((err: unknown) => {
    throw pastLimits(err);
  });
  return {
    subject: parsed.subject ?? '',
    to: addresses(parsed.to),
    cc: addresses(parsed.cc),
    replyTo: addresses(parsed.replyTo),
    attachments: parsed.attachments.map((a) => ({
      fileName: a.filename ?? 'attachment',
      disposition: (a.contentDisposition === 'inline' ? 'inline' : 'attachment') as 'inline' | 'attachment',
      size: a.size,
      contentType: a.contentType,
    })),
    text: parsed.text,
    html: typeof parsed.html === 'string' ? parsed.html : undefined,
  };
}

/**
 * mailsplit's EMAXLEN (too many parts, or a part's header block over its 1 MiB) is about the
 * message, not a fault: a TaskError that crosses the worker thread as validation_failed.
 */
function pastLimits(err: unknown): unknown {
  if ((err as { code?: unknown } | null)?.code !== 'EMAXLEN') return err;
  return new TaskError('validation_failed', `The MIME structure is past what is read (more than ${MAX_MIME_PARTS} MIME parts, or a part's header block over 1 MiB): ${(err as Error).message}`);
}

function addresses(obj: AddressObject | AddressObject[] | undefined): Address[] {
  const list = Array.isArray(obj) ? obj : obj ? [obj] : [];
  return list.flatMap((o) => o.value).flatMap((a) => (a.address ? [a.name ? { email: a.address, name: a.name } : { email: a.address }] : []));
}

/** Header fields of one entity, by lower-case name; undefined when a name we read is repeated. */
type Fields = Map<string, string>;

const READ = new Set(['subject', 'to', 'cc', 'reply-to', 'content-type', 'content-transfer-encoding', 'content-disposition']);

function fieldsOf(lines: { raw: string }[]): Fields | undefined {
  const out: Fields = new Map();
  for (const f of lines) {
    // Unfolded and split at the first colon as mailparser does (libmime.decodeHeader), by index:
    // no expression whose name and leading-space quantifiers overlap (issue 29).
    const line = f.raw.replace(/(?:\r?\n|\r)[ \t]*/g, ' ').trim();
    const colon = line.indexOf(':');
    const name = colon > 0 ? line.slice(0, colon).trim().toLowerCase() : '';
    if (!READ.has(name)) continue;
    if (out.has(name)) return undefined;
    out.set(name, line.slice(colon + 1).trim());
  }
  return out;
}

/** The fast path: undefined unless the message has one of the two common shapes. */
export function fastContent(msg: SplitMessage): RawContent | undefined {
  if (msg.fields.some((f) => hasNonAscii(f.raw))) return undefined;
  const top = fieldsOf(msg.fields);
  if (!top) return undefined;
  const to = plainAddresses(top.get('to'));
  const cc = plainAddresses(top.get('cc'));
  const replyTo = plainAddresses(top.get('reply-to'));
  if (!to || !cc || !replyTo) return undefined;
  const body = bodyText(top, msg.body, msg.eol);
  if (!body) return undefined;
  const subject = top.get('subject');
  return { subject: subject === undefined ? '' : decodedWords(subject), to, cc, replyTo, attachments: [], ...body };
}

/** mailparser keeps a Subject it cannot decode as it is. */
function decodedWords(value: string): string {
  try {
    return libmime.decodeWords(value);
  } catch {
    return value;
  }
}

/** Addresses without encoded words, punycode or groups (mailparser would rewrite those). */
function plainAddresses(value: string | undefined): Address[] | undefined {
  if (value === undefined) return [];
  if (/=\?|xn--|[:;]/i.test(value)) return undefined;
  const out: Address[] = [];
  for (const a of addressparser(value)) {
    if ('group' in a) return undefined;
    const name = (a.name || '').trim();
    if (a.address) out.push(name ? { email: a.address, name } : { email: a.address });
  }
  return out;
}

type Body = { text?: string; html?: string };

/** text/plain or text/html alone, or multipart/alternative of exactly those two. */
function bodyText(top: Fields, body: Buffer, eol: string): Body | undefined {
  const type = libmime.parseHeaderValue(top.get('content-type') ?? 'text/plain');
  const kind = type.value.toLowerCase();
  if (kind === 'text/plain' || kind === 'text/html') {
    const content = leafText(top, type.params, body);
    if (content === undefined) return undefined;
    // mailparser: an empty part gives nothing; an html-only message has an empty text (skipHtmlToText).
    if (content === '') return {};
    return kind === 'text/plain' ? { text: content } : { text: '', html: content };
  }
  if (kind !== 'multipart/alternative' || !type.params.boundary || top.has('content-disposition')) return undefined;
  const parts = splitParts(body, type.params.boundary, eol);
  if (!parts || parts.length !== 2) return undefined;
  const out: Body = {};
  const seen = new Set<string>();
  for (const part of parts) {
    const ptype = libmime.parseHeaderValue(part.fields.get('content-type') ?? 'text/plain');
    const pkind = ptype.value.toLowerCase();
    const key = pkind === 'text/plain' ? 'text' : pkind === 'text/html' ? 'html' : undefined;
    if (!key || seen.has(key)) return undefined;
    seen.add(key);
    const content = leafText(part.fields, ptype.params, part.body);
    if (content === undefined) return undefined;
    // mailparser skips an empty part.
    if (content !== '') out[key] = content;
  }
  return out;
}

/**
 * A text leaf's decoded content, or undefined when mailparser would treat it otherwise. `body`:
 * the leaf's octets, as a Buffer (a single-part message) or as a latin1 string (one octet per
 * character: a part, cut from the multipart text, so that its octets are not copied once more).
 */
function leafText(fields: Fields, params: Record<string, string>, body: Buffer | string): string | undefined {
  if (fields.has('content-disposition')) return undefined;
  if (params.format && params.format.toLowerCase() === 'flowed') return undefined;
  const charset = (params.charset ?? 'utf-8').toLowerCase().replace(/[^a-z0-9]+/g, '');
  if (!['utf8', 'ascii', 'usascii'].includes(charset)) return undefined;
  const encoding = (fields.get('content-transfer-encoding') ?? '7bit').toLowerCase();
  let bytes: Buffer;
  if (encoding === 'quoted-printable') {
    const qp = latin1Of(body);
    if (hasNonAscii(qp)) return undefined;
    bytes = decodeQp(qp);
  } else if (encoding === 'base64') bytes = Buffer.from(latin1Of(body), 'base64');
  else if (encoding === '7bit' || encoding === '8bit' || encoding === 'binary') bytes = typeof body === 'string' ? Buffer.from(body, 'latin1') : body;
  else return undefined;
  return bytes.toString().replace(/\r?\n/g, '\n');
}

function latin1Of(body: Buffer | string): string {
  return typeof body === 'string' ? body : body.toString('latin1');
}

/** RFC 2045 6.7, as libqp (mailparser's decoder) reads it: soft breaks out, =XX to the byte. */
function decodeQp(input: string): Buffer {
  // Trailing blanks of each line go (RFC 2045 6.7 rule 3) in one pass: /[\t ]+$/gm was
  // quadratic in a run of blanks inside a line (88 s for 200 KB, issue 29).
  const str = trimLineEndBlanks(input).replace(/=(?:\r?\n|$)/g, '');
  // Every byte below n is written before it is read (the result is out[0, n)).
  const out = Buffer.allocUnsafe(str.length);
  let n = 0;
  let from = 0;
  // This runs for every quoted-printable part submitted over SMTP, on the main thread before the
  // 250: the text between two "=" is copied natively (the input is ASCII, checked by the caller),
  // and only each "=" is looked at in JavaScript (a loop over every character was about 6 µs for
  // a 2 KB message's two parts; bench/RESULTS.md, issue 36).
  for (let eq = str.indexOf('=', from); eq >= 0; eq = str.indexOf('=', from)) {
    if (eq > from) n += out.write(str.slice(from, eq), n, 'latin1');
    const hi = hexValue(str.charCodeAt(eq + 1));
    const lo = hi >= 0 ? hexValue(str.charCodeAt(eq + 2)) : -1;
    if (lo >= 0) {
      out[n++] = hi * 16 + lo;
      from = eq + 3;
    } else {
      // A lone or short "=" stays as it is, as libqp leaves it.
      out[n++] = 0x3d;
      from = eq + 1;
    }
  }
  if (from < str.length) n += out.write(str.slice(from), n, 'latin1');
  return out.subarray(0, n);
}

/** The value of one hexadecimal digit (either case), or -1 (also for NaN past the end). */
function hexValue(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x41 && c <= 0x46) return c - 0x37;
  if (c >= 0x61 && c <= 0x66) return c - 0x57;
  return -1;
}

/** A part while splitParts reads it: its header lines, where its body starts (-1 before the blank line) and ends. */
interface PartSpan {
  head: string[];
  bodyStart: number;
  end: number;
}

/**
 * The body parts of a multipart entity (RFC 2046 5.1.1): between "--boundary" lines, the line
 * break before each delimiter belongs to the delimiter. Undefined without a close delimiter,
 * or when a part's header block is not plain ASCII or repeats a field we read. A part's body is
 * cut from the entity's latin1 text by offset (after its first empty line, up to the line break
 * of the delimiter after it), not joined again from its lines.
 */
function splitParts(body: Buffer, boundary: string, eol: string): { fields: Fields; body: string }[] | undefined {
  const text = body.toString('latin1');
  const open = `--${boundary}`;
  const close = `--${boundary}--`;
  const parts: PartSpan[] = [];
  let cur: PartSpan | null = null;
  let closed = false;
  // Lines are walked by offset (the lines text.split(eol) would give), and only a line that may be
  // a delimiter or a part's header line becomes a string: splitting the whole body first made a
  // string of every line, 1.5 s for 25 MB of delimiter lines, although a third part stops the read.
  let at = 0; // offset of the line in text
  for (;;) {
    const nl = text.indexOf(eol, at);
    const end = nl < 0 ? text.length : nl;
    // Only a line that starts with "--" can be a delimiter: the others skip the trim.
    const bare = text.startsWith('--', at) ? trimBlanksEnd(text.slice(at, end)) : null;
    if (bare === open || bare === close) {
      if (cur) {
        cur.end = at - eol.length;
        parts.push(cur);
      }
      if (bare === close) {
        closed = true;
        break;
      }
      // The fast path takes two parts: a third is mailparser's, so stop reading here.
      if (parts.length === 2) return undefined;
      cur = { head: [], bodyStart: -1, end: 0 };
    } else if (cur && cur.bodyStart < 0) {
      // The header block ends at the part's first empty line; the body starts after it.
      if (end === at) cur.bodyStart = at + eol.length;
      else cur.head.push(text.slice(at, end));
    }
    if (nl < 0) break;
    at = nl + eol.length;
  }
  if (!closed) return undefined;
  const out: { fields: Fields; body: string }[] = [];
  for (const p of parts) {
    if (p.bodyStart < 0) return undefined;
    if (p.head.some((l) => hasNonAscii(l) || l.startsWith('--'))) return undefined;
    const fields = fieldsOf(foldFields(p.head, eol));
    if (!fields) return undefined;
    // An empty body has bodyStart > end, and slice gives ''.
    out.push({ fields, body: text.slice(p.bodyStart, p.end) });
  }
  return out;
}
