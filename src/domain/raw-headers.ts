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
 * longer than `limit` octets; only the first `limit` octets are searched.
 */
export function headerBlockExceeds(raw: Buffer, limit: number): boolean {
  if (raw.length <= limit) return false;
  const head = raw.subarray(0, limit + 2);
  return head.indexOf('\n\n') < 0 && raw.subarray(0, limit + 4).indexOf('\r\n\r\n') < 0;
}

export function splitMessage(raw: Buffer): SplitMessage {
  let end = raw.indexOf('\r\n\r\n');
  let eol = '\r\n';
  const lf = raw.indexOf('\n\n');
  if (lf >= 0 && (end < 0 || lf < end)) {
    end = lf;
    eol = '\n';
  }
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
