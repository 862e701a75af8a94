/**
 * Just enough MIME to read reports (RFC 6522 multipart/report): walk the parts of a message,
 * decode their transfer encoding, and read the "field: value" blocks that both delivery status
 * notifications (RFC 3464 2.1) and feedback reports (RFC 5965 3.1) are made of. mailparser
 * merges message/delivery-status into the text body, so it cannot tell the parts apart.
 */
import { MAX_ADDRESS_LENGTH } from '../domain/address.js';
import { fieldValue, headerBlockExceeds, MAX_HEADER_BYTES, splitMessage, type SplitMessage } from '../domain/raw-headers.js';
import { isWhiteSpace } from '../domain/white-space.js';
import { parseContentType } from './content-type.js';

export interface MimePart {
  headers: SplitMessage;
  /** Lowercased type/subtype; text/plain when absent (RFC 2045 5.2). */
  type: string;
  params: Record<string, string>;
  /** The body with its Content-Transfer-Encoding undone. */
  body: Buffer;
}

export interface Report {
  /** The report-type parameter: delivery-status (RFC 3464) or feedback-report (RFC 5965). */
  reportType: string;
  parts: MimePart[];
}

const MAX_DEPTH = 4;
const MAX_PARTS = 50;

/**
 * One MIME entity. One whose header block is over MAX_HEADER_BYTES is read as text/plain without
 * fields: no report has such headers, and splitting them would cost time in proportion to the
 * message (issue 29).
 */
export function parsePart(raw: Buffer): MimePart {
  if (headerBlockExceeds(raw, MAX_HEADER_BYTES)) return { headers: { fields: [], body: raw, eol: '\r\n' }, type: 'text/plain', params: {}, body: raw };
  const headers = splitMessage(raw);
  const { type, params } = parseContentType(fieldValue(headers, 'Content-Type') ?? 'text/plain');
  const cte = (fieldValue(headers, 'Content-Transfer-Encoding') ?? '7bit').toLowerCase();
  return { headers, type, params, body: decode(headers.body, cte) };
}

/** The first multipart/report in the message (top level or nested, e.g. in multipart/mixed). */
export function findReport(raw: Buffer): Report | null {
  return search(parsePart(raw), 0);
}

function search(part: MimePart, depth: number): Report | null {
  if (!part.type.startsWith('multipart/') || depth > MAX_DEPTH) return null;
  const parts = childParts(part);
  if (part.type === 'multipart/report') return { reportType: (part.params['report-type'] ?? '').toLowerCase(), parts };
  for (const p of parts) {
    const found = search(p, depth + 1);
    if (found) return found;
  }
  return null;
}

/** The body parts of a multipart entity (RFC 2046 5.1.1), at most MAX_PARTS. */
export function childParts(part: MimePart): MimePart[] {
  const boundary = part.params.boundary;
  if (!boundary) return [];
  const text = part.body.toString('latin1');
  const delimiter = `--${boundary}`;
  const out: MimePart[] = [];
  let pos = text.indexOf(delimiter);
  while (pos >= 0 && out.length < MAX_PARTS) {
    const lineEnd = text.indexOf('\n', pos);
    if (lineEnd < 0 || text.startsWith(`${delimiter}--`, pos)) break;
    const next = text.indexOf(`\n${delimiter}`, lineEnd);
    const end = next < 0 ? text.length : next;
    const chunk = text.slice(lineEnd + 1, end).replace(/\r$/, '');
    out.push(parsePart(Buffer.from(chunk, 'latin1')));
    if (next < 0) break;
    pos = next + 1;
  }
  return out;
}

function decode(body: Buffer, cte: string): Buffer {
  if (cte === 'base64') return Buffer.from(body.toString('latin1').replace(/[^A-Za-z0-9+/=]/g, ''), 'base64');
  if (cte === 'quoted-printable') {
    // RFC 2045 6.7: soft line breaks "=" CRLF vanish, "=XX" is one octet.
    const s = body.toString('latin1').replace(/=\r?\n/g, '').replace(/=([0-9A-Fa-f]{2})/g, (_m, h: string) => String.fromCharCode(parseInt(h, 16)));
    return Buffer.from(s, 'latin1');
  }
  return body;
}

/**
 * Longest report field value kept (several folded lines of RFC 5322 2.1.1's 998 octets); a longer
 * one is left out as if absent. The fields are addresses, status codes, a diagnostic reply and
 * short names, and what is kept goes into events.
 */
export const MAX_FIELD_LENGTH = 8192;
/** Fields read per block: RFC 3464 2.2-2.3 and RFC 5965 3.1-3.2 define about a dozen each; the rest are ignored. */
export const MAX_BLOCK_FIELDS = 100;
/**
 * Largest delivery-status or feedback-report part read; a larger one is not read at all. A DSN
 * block per recipient is a few hundred octets, so this holds hundreds of recipients, and the
 * parse stays within milliseconds whatever the 10 MiB the inbound listener takes (issue 29).
 */
export const MAX_FIELDS_TEXT = 256 * 1024;

/**
 * "Name: value" fields grouped in blocks separated by blank lines (RFC 3464 2.1: the
 * per-message fields, then one block per recipient; RFC 5965 has one block). Names are
 * lowercased; folded lines are joined; comments after the value stay in it. Within the caps
 * above: values longer than MAX_FIELD_LENGTH are left out, fields past MAX_BLOCK_FIELDS ignored,
 * and a text longer than MAX_FIELDS_TEXT has no blocks.
 */
export function fieldBlocks(text: string): Array<Record<string, string>> {
  if (text.length > MAX_FIELDS_TEXT) return [];
  const blocks: Array<Record<string, string>> = [];
  let current: Record<string, string> = {};
  let count = 0;
  let last = '';
  const oversized = new Set<string>();
  const endBlock = () => {
    if (count === 0) return;
    for (const name of oversized) delete current[name];
    if (Object.keys(current).length > 0) blocks.push(current);
    current = {};
    count = 0;
    last = '';
    oversized.clear();
  };
  const keep = (name: string, value: string) => {
    if (value.length > MAX_FIELD_LENGTH) oversized.add(name);
    else current[name] = value;
  };
  for (const line of text.replace(/\r/g, '').split('\n')) {
    if (line.trim() === '') {
      endBlock();
    } else if (/^[ \t]/.test(line) && last) {
      // A value past the cap grows no further: it is dropped at the end of its block.
      if (!oversized.has(last)) keep(last, `${current[last]} ${line.trim()}`);
    } else {
      const colon = line.indexOf(':');
      if (colon <= 0 || count >= MAX_BLOCK_FIELDS) continue;
      last = line.slice(0, colon).trim().toLowerCase();
      count++;
      // The first occurrence wins (Original-Rcpt-To may repeat; one address is enough here).
      if (current[last] === undefined && !oversized.has(last)) keep(last, line.slice(colon + 1).trim());
    }
  }
  endBlock();
  return blocks;
}

/**
 * The address of a typed field (RFC 3464 2.3.2 "rfc822; ann@example.net") or a bare/angled one:
 * the run of characters other than white space, "<", ">" and ";" at the end of the value (before
 * one closing ">"), if it has an "@" with something on both sides; undefined when that run is
 * longer than an address can be (RFC 5321 4.5.3.1.3: a path is at most 256 octets with its
 * angle brackets). A scan back from the end, bounded by that length: the regular expression this
 * replaces (`/<?([^\s<>;]+@[^\s<>;]+?)>?\s*$/`) took cubic time on "a@a@…", 25 s for a
 * 4,000-character Final-Recipient on the inbound listener (issue 29).
 */
export function addressOf(value: string | undefined): string | undefined {
  if (!value) return undefined;
  const v = (value.includes(';') ? value.slice(value.indexOf(';') + 1) : value).trim();
  const end = v.endsWith('>') ? v.length - 1 : v.length;
  let start = end;
  while (start > 0 && end - start <= MAX_ADDRESS_LENGTH && isAddressChar(v.charCodeAt(start - 1))) start--;
  if (end - start > MAX_ADDRESS_LENGTH) return undefined;
  const run = v.slice(start, end);
  const at = run.indexOf('@', 1);
  return at > 0 && at < run.length - 1 ? run.toLowerCase() : undefined;
}

/** `[^\s<>;]` */
function isAddressChar(c: number): boolean {
  return c !== 0x3c && c !== 0x3e && c !== 0x3b && !isWhiteSpace(c);
}

/** The headers of the original message inside a report (message/rfc822 or text/rfc822-headers); none when over MAX_HEADER_BYTES. */
export function originalHeaders(report: Report): SplitMessage | undefined {
  const part = report.parts.find((p) => /^(message\/rfc822|text\/rfc822-headers|message\/global|message\/global-headers)$/.test(p.type));
  return part && !headerBlockExceeds(part.body, MAX_HEADER_BYTES) ? splitMessage(part.body) : undefined;
}
