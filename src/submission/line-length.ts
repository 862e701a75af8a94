/**
 * RFC 5322 2.1.1 and RFC 5321 4.5.3.1.6: a line of a message is at most 998 octets before its
 * CRLF. Receivers refuse longer lines ("500 Line too long") or break them, which also breaks the
 * DKIM signature, yet submission clients do send them (HTML on one line). So the parts that have
 * them are re-encoded before signing: text parts as quoted-printable (RFC 2045 6.7), other leaf
 * parts as base64 (RFC 2045 6.8), both with lines of at most 76 characters; every other byte of
 * the message stays as it was. What cannot be re-encoded without changing what it says is
 * refused: header lines, parts already in base64 or quoted-printable (they are then broken),
 * message/* parts (RFC 2046 5.2.1 allows them no encoding), preamble and epilogue text.
 * A DKIM signature the client made over a re-encoded part no longer verifies; ours, made after
 * this, does.
 */
import libmime from 'libmime';
import { encode as qpEncode, wrap as qpWrap } from 'nodemailer/lib/qp';
import { AppError } from '../domain/errors.js';
import { ensureField, fieldValue, joinMessage, removeFields, splitMessage, type HeaderField, type SplitMessage } from '../domain/raw-headers.js';

export const MAX_LINE_OCTETS = 998;
/** Nesting deeper than this is not mail a person wrote; refused rather than walked. */
const MAX_DEPTH = 20;
/** Parts of one multipart walked to re-encode long lines; more is not mail a person wrote either (issue 29: each costs a split and a scan). */
const MAX_PARTS = 1000;
const IDENTITY_ENCODINGS = new Set(['7bit', '8bit', 'binary']);

/** The message with every line within the limit, or an AppError (validation_failed). */
export function fitLineLength(msg: SplitMessage): SplitMessage {
  const fitted = fitEntity(msg, 'text/plain', 0);
  return fitted ? ensureField(fitted, 'MIME-Version', '1.0') : msg;
}

/** The entity with its long lines re-encoded, or null when it has none. */
function fitEntity(entity: SplitMessage, defaultType: string, depth: number): SplitMessage | null {
  checkHeaderLines(entity.fields);
  if (longestLine(entity.body) <= MAX_LINE_OCTETS) return null;
  if (depth > MAX_DEPTH) refuse(`MIME parts nested more than ${MAX_DEPTH} deep`);
  const ct = libmime.parseHeaderValue(fieldValue(entity, 'Content-Type') ?? defaultType);
  const type = ct.value.toLowerCase();
  if (type.startsWith('multipart/')) {
    const body = fitMultipart(entity, ct.params.boundary, type === 'multipart/digest' ? 'message/rfc822' : 'text/plain', depth);
    return { ...entity, body };
  }
  const cte = (fieldValue(entity, 'Content-Transfer-Encoding') ?? '7bit').toLowerCase();
  if (!IDENTITY_ENCODINGS.has(cte)) refuse(`a ${type} part encoded as ${cte} has lines longer than ${MAX_LINE_OCTETS} octets`);
  if (type.startsWith('message/')) refuse(`a ${type} part has lines longer than ${MAX_LINE_OCTETS} octets and may not be re-encoded (RFC 2046 5.2.1)`);
  const text = type.startsWith('text/');
  const fields = removeFields(entity, ['Content-Transfer-Encoding']).fields;
  return {
    ...entity,
    fields: [...fields, { name: 'Content-Transfer-Encoding', raw: `Content-Transfer-Encoding: ${text ? 'quoted-printable' : 'base64'}` }],
    body: text ? quotedPrintable(entity.body, entity.eol) : base64(entity.body, entity.eol),
  };
}

/**
 * Re-encodes the parts of a multipart body that need it (RFC 2046 5.1.1: a delimiter is a line
 * "--boundary", the line break before it belongs to it, "--boundary--" closes the body).
 */
function fitMultipart(entity: SplitMessage, boundary: string | undefined, childType: string, depth: number): Buffer {
  if (!boundary) refuse(`a multipart part without a boundary has lines longer than ${MAX_LINE_OCTETS} octets`);
  const body = entity.body;
  const delims = delimiters(body, boundary);
  if (delims.length === 0) refuse(`a multipart part whose boundary never occurs has lines longer than ${MAX_LINE_OCTETS} octets`);
  if (delims.length > MAX_PARTS + 1) refuse(`a multipart part with more than ${MAX_PARTS} parts has lines longer than ${MAX_LINE_OCTETS} octets`);
  const pieces: Buffer[] = [];
  if (longestLine(body.subarray(0, delims[0].start)) > MAX_LINE_OCTETS) refuse('the MIME preamble has lines that are too long');
  let copiedUpTo = 0;
  for (let k = 0; k < delims.length; k++) {
    const d = delims[k];
    if (d.close) break;
    const start = d.next;
    const end = k + 1 < delims.length ? delims[k + 1].start - lineBreakBefore(body, delims[k + 1].start) : body.length;
    if (end <= start) continue;
    const part = body.subarray(start, end);
    const fitted = fitEntity(splitPart(part, entity.eol), childType, depth + 1);
    if (!fitted) continue;
    pieces.push(body.subarray(copiedUpTo, start), joinPart(fitted));
    copiedUpTo = end;
  }
  const last = delims[delims.length - 1];
  if (last.close && longestLine(body.subarray(last.next)) > MAX_LINE_OCTETS) refuse('the MIME epilogue has lines that are too long');
  pieces.push(body.subarray(copiedUpTo));
  return Buffer.concat(pieces);
}

interface Delimiter {
  start: number;
  /** Start of the line after the delimiter line. */
  next: number;
  close: boolean;
}

function delimiters(body: Buffer, boundary: string): Delimiter[] {
  const marker = Buffer.from(`--${boundary}`, 'latin1');
  const out: Delimiter[] = [];
  for (let pos = 0; ; ) {
    const i = body.indexOf(marker, pos);
    if (i < 0) return out;
    const nl = body.indexOf(0x0a, i);
    const lineEnd = nl < 0 ? body.length : nl;
    // Only a marker at the start of a line is a delimiter: the search goes on from the next line,
    // not the next marker, or a line full of markers costs one search per marker (issue 29).
    pos = lineEnd;
    if (i > 0 && body[i - 1] !== 0x0a) continue;
    // Transport padding (white space) may follow the boundary on its line.
    const rest = body.subarray(i + marker.length, lineEnd).toString('latin1');
    const close = /^--[ \t\r]*$/.test(rest);
    if (!close && !/^[ \t\r]*$/.test(rest)) continue;
    out.push({ start: i, next: nl < 0 ? body.length : nl + 1, close });
    if (close || out.length > MAX_PARTS + 1) return out;
  }
}

/** A part is its own header block and body; a part that starts with a blank line has no headers. */
function splitPart(part: Buffer, eol: string): SplitMessage {
  if (part[0] === 0x0a) return { fields: [], body: part.subarray(1), eol: '\n' };
  if (part[0] === 0x0d && part[1] === 0x0a) return { fields: [], body: part.subarray(2), eol: '\r\n' };
  const split = splitMessage(part);
  return split.fields.length > 0 ? split : { fields: [], body: part, eol };
}

function joinPart(p: SplitMessage): Buffer {
  return p.fields.length > 0 ? joinMessage(p) : Buffer.concat([Buffer.from(p.eol), p.body]);
}

function lineBreakBefore(body: Buffer, at: number): number {
  if (at >= 2 && body[at - 2] === 0x0d && body[at - 1] === 0x0a) return 2;
  return at >= 1 && body[at - 1] === 0x0a ? 1 : 0;
}

function checkHeaderLines(fields: HeaderField[]): void {
  for (const f of fields) {
    // Most fields are not folded: one line, not split by a regular expression (this runs for
    // every field of every submitted message, on the main thread).
    const lines = f.raw.includes('\n') ? f.raw.split(/\r?\n/) : [f.raw];
    for (const line of lines) {
      // splitMessage read the header as latin1: one character per octet.
      if (line.length > MAX_LINE_OCTETS) refuse(`the header ${f.name.slice(0, 40)} has a line longer than ${MAX_LINE_OCTETS} octets (RFC 5322 2.1.1); fold it`);
    }
  }
}

/** Length in octets of the longest line, without its line break. */
export function longestLine(buf: Buffer): number {
  let max = 0;
  for (let start = 0; start <= buf.length; ) {
    const nl = buf.indexOf(0x0a, start);
    const end = nl < 0 ? buf.length : nl;
    const len = end - start - (nl >= 0 && end > start && buf[end - 1] === 0x0d ? 1 : 0);
    if (len > max) max = len;
    if (nl < 0) break;
    start = nl + 1;
  }
  return max;
}

function quotedPrintable(body: Buffer, eol: string): Buffer {
  // nodemailer's encoder keeps CRLF line breaks and soft-breaks with "=\r\n" at 76 characters.
  const text = qpWrap(qpEncode(body), 76);
  return Buffer.from(eol === '\r\n' ? text : text.replace(/\r\n/g, eol), 'latin1');
}

function base64(body: Buffer, eol: string): Buffer {
  const lines = body.toString('base64').match(/.{1,76}/g) ?? [];
  return Buffer.from(lines.join(eol) + eol, 'latin1');
}

function refuse(why: string): never {
  throw new AppError('validation_failed', `Line length: ${why}`);
}
