/**
 * The two header fields a received message is listed by (GET /inbound/messages `from` and
 * `subject`), read when the listener commits it: the first address of From, lower-cased, and the
 * Subject with its RFC 2047 encoded-words decoded. Only the first MAX_HEADER_BYTES of the message
 * are looked at (raw-headers.ts), so a huge or malformed message costs no more than a small one;
 * what cannot be read is null. The full parse (mailparser) comes later, in processing.
 */
import libmime from 'libmime';
import addressparser from 'nodemailer/lib/addressparser/index.js';
import { MAX_HEADER_BYTES, splitMessage, type HeaderField } from '../domain/raw-headers.js';
import { headerText } from './payload-fields.js';

/** Long enough for any real subject; the list filters by a part of it. */
const MAX_SUBJECT = 998;

export interface HeaderSummary {
  from: string | null;
  subject: string | null;
}

export function headerSummary(raw: Buffer): HeaderSummary {
  const { fields } = splitMessage(raw.subarray(0, MAX_HEADER_BYTES));
  const value = (name: string) => {
    const f = fields.find((x) => x.name.toLowerCase() === name);
    return f ? headerText(unfolded(f)).trim() : undefined;
  };
  return { from: fromAddress(value('from')), subject: decoded(value('subject')) };
}

/**
 * A field's value unfolded (RFC 5322 2.2.3), one char per byte as splitMessage reads it: headerText
 * then reads it as the payload's `headers` do (UTF-8, else windows-1252), so that the list's
 * subject is the payload's and a Latin-1 Subject is found by its own letters.
 */
function unfolded(f: HeaderField): string {
  const colon = f.raw.indexOf(':');
  return colon < 0 ? '' : f.raw.slice(colon + 1).replace(/\r?\n(?=[ \t])/g, '');
}

function fromAddress(v: string | undefined): string | null {
  if (v === undefined) return null;
  try {
    const first = addressparser(v, { flatten: true })[0];
    return first?.address ? first.address.toLowerCase() : null;
  } catch {
    return null;
  }
}

function decoded(v: string | undefined): string | null {
  if (v === undefined) return null;
  try {
    return libmime.decodeWords(v).slice(0, MAX_SUBJECT);
  } catch {
    return v.slice(0, MAX_SUBJECT);
  }
}
