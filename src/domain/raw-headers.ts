/**
 * Minimal RFC 5322 header-block surgery for messages submitted over SMTP: split the header
 * block from the body, read and remove fields, add missing ones. The body is never touched, so
 * signatures over it (and its bytes on disk) stay exactly as submitted.
 */

export interface HeaderField {
  /** Field name as written. */
  name: string;
  /** The whole field including its name and folded continuation lines, without the final CRLF. */
  raw: string;
}

export interface SplitMessage {
  fields: HeaderField[];
  /** Everything after the blank line that ends the header block (may be empty). */
  body: Buffer;
  /** The line ending the message uses ("\r\n" normally). */
  eol: string;
}

/**
 * Largest header block parsed from mail that comes from outside, in octets up to the blank line
 * that ends it: submitted mail with a larger one is refused (submission/raw.ts), an inbound part
 * with one is not read as a report. Real header blocks are a few KiB (Sendmail refuses more than
 * 32 KiB: MaxHeadersLength); without a cap the header parsers would have work that grows with
 * the whole message (10 MiB inbound, smtp.maxMessageSize submitted) on the main thread (issue 29).
 */
export const MAX_HEADER_BYTES = 64 * 1024;

/**
 * Whether the header block (up to the blank line that ends it, or all of `raw` without one) is
 * longer than `limit` octets; only the first `limit` + 4 octets are searched.
 */
export function headerBlockExceeds(raw: Buffer, limit: number): boolean {
  return raw.length > limit && headerBlockEnd(raw, limit) < 0;
}

/**
 * Where a header block of at most `limit` octets ends: the offset of its blank line (CRLF or bare
 * LF), `raw.length` for a `raw` of at most `limit` octets without one (all header), or -1 when the
 * block is longer. The block is the octets before its blank line whatever that line's ending, as
 * MAX_HEADER_BYTES counts it: a bare-LF blank line, 2 octets to CRLF's 4, does not let the block
 * run 2 octets longer. Only the first `limit` + 4 octets are searched.
 */
export function headerBlockEnd(raw: Buffer, limit: number): number {
  // A blank line starting at `limit` at the latest lies within limit + 4 (CRLF) or limit + 2 (bare LF).
  const end = headerEnd(raw, { bareLf: true, within: limit + 4 });
  if (end >= 0) return end <= limit ? end : -1;
  return raw.length <= limit ? raw.length : -1;
}

export interface HeaderEndOptions {
  /**
   * A bare-LF blank line ("\n\n") ends the block too when it comes first: for mail from outside,
   * which may use bare LF line ends. Without it only CRLF counts (stored and signed messages,
   * RFC 5322 2.1).
   */
  bareLf?: boolean;
  /** Only a blank line lying wholly within the first `within` octets counts, as if `raw` were `raw.subarray(0, within)`. */
  within?: number;
}

const CRLF_BLANK = Buffer.from('\r\n\r\n');
const LF_BLANK = Buffer.from('\n\n');
const CRLF_ONLY: HeaderEndOptions = Object.freeze({});
/** headerEnd's options for mail from outside, which may end its header block with a bare-LF blank line. */
export const BARE_LF: HeaderEndOptions = Object.freeze({ bareLf: true });

/**
 * Where the blank line that ends the header block starts (RFC 5322 2.1), or -1 without one: the
 * first "\r\n\r\n", or with `bareLf` the first of it and "\n\n". `raw[end]` is CR for a CRLF
 * blank line (the body starts at end + 4) and LF for a bare-LF one (at end + 2).
 *
 * Called per delivery attempt and per submitted message: native scans only, no allocation. The
 * bare-LF search stops at the CRLF end, so a CRLF message costs two scans of its header block
 * (not of its body); past `within` nothing is searched.
 */
export function headerEnd(raw: Buffer, options: HeaderEndOptions = CRLF_ONLY): number {
  const within = options.within === undefined ? raw.length : Math.min(options.within, raw.length);
  const crlf = firstWithin(raw, CRLF_BLANK, within);
  if (!options.bareLf) return crlf;
  // A "\n\n" before the CRLF one starts at crlf - 1 at the latest (raw[crlf] is CR).
  const lf = firstWithin(raw, LF_BLANK, crlf < 0 ? within : crlf + 1);
  return lf < 0 ? crlf : lf;
}

/**
 * The first `needle` lying wholly within raw[0, within), or -1. Buffer.indexOf has no end bound
 * (and a subarray would allocate): lastIndexOf from the last possible start says whether there is
 * one there, searching backwards no further than that; indexOf then stops at the first.
 */
function firstWithin(raw: Buffer, needle: Buffer, within: number): number {
  if (within >= raw.length) return raw.indexOf(needle);
  const lastStart = within - needle.length;
  return lastStart >= 0 && raw.lastIndexOf(needle, lastStart) >= 0 ? raw.indexOf(needle) : -1;
}

export function splitMessage(raw: Buffer): SplitMessage {
  const end = headerEnd(raw, BARE_LF);
  const eol = end >= 0 && raw[end] === 0x0a ? '\n' : '\r\n';
  const headerText = (end < 0 ? raw : raw.subarray(0, end)).toString('latin1');
  const body = end < 0 ? Buffer.alloc(0) : raw.subarray(end + eol.length * 2);
  return { fields: foldFields(headerText.split(/\r?\n/), eol), body, eol };
}

/** Header lines as fields: a line starting with white space continues the field before it (RFC 5322 2.2.3), joined with `eol`; empty lines are skipped. */
export function foldFields(lines: readonly string[], eol: string): HeaderField[] {
  const fields: HeaderField[] = [];
  for (const line of lines) {
    if (/^[ \t]/.test(line) && fields.length > 0) {
      fields[fields.length - 1].raw += eol + line; // folded continuation (RFC 5322 2.2.3)
    } else if (line.length > 0) {
      const colon = line.indexOf(':');
      fields.push({ name: colon > 0 ? line.slice(0, colon).trim() : '', raw: line });
    }
  }
  return fields;
}

export function joinMessage(m: SplitMessage): Buffer {
  const head = m.fields.map((f) => f.raw).join(m.eol) + m.eol + m.eol;
  return Buffer.concat([Buffer.from(head, 'latin1'), m.body]);
}

/**
 * A field's value after its colon, unfolded (RFC 5322 2.2.3: a line break before white space is
 * removed) and with its bytes read as UTF-8 (RFC 6532; splitMessage reads header bytes as latin1);
 * '' for a line without a colon.
 */
export function unfoldedUtf8Value(f: HeaderField): string {
  const colon = f.raw.indexOf(':');
  if (colon < 0) return '';
  return Buffer.from(f.raw.slice(colon + 1), 'latin1').toString('utf8').replace(/\r?\n(?=[ \t])/g, '');
}

/** The unfolded value of the first field with this name (case-insensitive). */
export function fieldValue(m: SplitMessage, name: string): string | undefined {
  const f = m.fields.find((x) => x.name.toLowerCase() === name.toLowerCase());
  if (!f) return undefined;
  return f.raw.slice(f.raw.indexOf(':') + 1).replace(/\r?\n[ \t]/g, ' ').trim();
}

export function removeFields(m: SplitMessage, names: string[]): SplitMessage {
  const drop = new Set(names.map((n) => n.toLowerCase()));
  return { ...m, fields: m.fields.filter((f) => !drop.has(f.name.toLowerCase())) };
}

/** Appends `Name: value` when no field of that name exists. */
export function ensureField(m: SplitMessage, name: string, value: string): SplitMessage {
  if (fieldValue(m, name) !== undefined) return m;
  return { ...m, fields: [...m.fields, { name, raw: `${name}: ${value}` }] };
}

/** Header lines that are not RFC 5322 fields (no name, or 8-bit junk in the name). */
export function malformedFields(m: SplitMessage): string[] {
  return m.fields.filter((f) => !/^[\x21-\x39\x3b-\x7e]+$/.test(f.name)).map((f) => f.raw.slice(0, 80));
}
