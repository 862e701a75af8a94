/**
 * The fields of an inbound payload as read from mailparser's result: addresses, header fields,
 * the date, attachments. Each is bounded in count and size, and each takes what a hostile or
 * broken message gives (no From, 8-bit bytes, a 100 KB file name) to a plain value.
 */
import libmime from 'libmime';
import type { AddressObject, Attachment, EmailAddress, ParsedMail } from 'mailparser';
import { utf8OfBinary } from '../domain/binary-text.js';
import { windows1252 } from '../domain/windows-1252.js';

export interface PayloadAddress {
  address: string;
  name: string;
}

export interface PayloadHeader {
  name: string;
  value: string;
}

export interface PayloadAttachment {
  filename: string | null;
  contentType: string;
  size: number;
  contentId: string | null;
  /** The content in base64, for attachments up to the inline limit. */
  content?: string;
  /** Where the content is fetched instead, for larger ones. */
  url?: string;
}

/** Addresses per field at most: a To of thousands is a list, not a conversation. */
export const MAX_ADDRESSES = 500;
/** Header fields listed at most (the header block is bounded in bytes, not fields). */
export const MAX_HEADERS = 500;
/** A file name is cut to this many characters (common file systems' name limit, 255). */
export const MAX_FILENAME = 255;

/**
 * Whether mailparser's reading of a broken field ("<<<@@@>>>") is an address at all: a local
 * part and a domain around the last "@" (a quoted local part may hold one, RFC 5322 3.4.1).
 */
function isAddress(address: string): boolean {
  const at = address.lastIndexOf('@');
  return at > 0 && at < address.length - 1 && !/\s/.test(address);
}

function flatten(list: EmailAddress[], into: PayloadAddress[]): void {
  for (const entry of list) {
    if (into.length >= MAX_ADDRESSES) return;
    // A group ("team: a@x, b@y;", RFC 5322 3.4) stands for its members.
    if (entry.group) flatten(entry.group, into);
    else if (entry.address && isAddress(entry.address)) into.push({ address: entry.address, name: entry.name ?? '' });
  }
}

/** Every address of a field (several fields of one name count as one), groups unfolded. */
export function addresses(field: AddressObject | AddressObject[] | undefined): PayloadAddress[] {
  const out: PayloadAddress[] = [];
  for (const object of field === undefined ? [] : Array.isArray(field) ? field : [field]) flatten(object.value, out);
  return out;
}

/**
 * Header bytes as text: mailparser hands header lines over one char per byte. 8-bit header text
 * is UTF-8 (RFC 6532 3.2); a field that is not valid UTF-8 comes from a legacy mailer that wrote
 * its own charset raw ("From: J\xf6rg", no RFC 2047 encoded-word) and is read as windows-1252,
 * the "latin1" of the WHATWG Encoding standard, so its letters are kept rather than lost to U+FFFD.
 * The one reading of header bytes for the payload: `headers`, and through them the Subject and the
 * addresses' names. Linear in the field, which the header block's cap bounds (parse-received.ts).
 */
export function headerText(binary: string): string {
  return utf8OfBinary(binary) ?? windows1252(binary);
}

/** The top-level header fields in order, unfolded (RFC 5322 2.2.3), at most MAX_HEADERS. */
export function headerList(mail: ParsedMail | null): PayloadHeader[] {
  return (mail?.headerLines ?? []).slice(0, MAX_HEADERS).map(({ line }) => {
    const colon = line.indexOf(':');
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/\r?\n(?=[ \t])/g, '').trimStart();
    return { name: headerText(colon < 0 ? line : line.slice(0, colon)), value: headerText(value) };
  });
}

/**
 * The first Subject field of `headers` with its encoded-words decoded (RFC 2047), or null (as
 * mailparser gives an empty one: no field and an empty field are alike to an application). Read
 * from the header list, not mailparser's `subject`: mailparser reads 8-bit header bytes as UTF-8
 * only, so a Subject sent in raw Latin-1 ("Gr\xfc\xdfe") came as "Gr\ufffd\ufffde", its letters
 * lost, beside the same field in `headers` read right (headerText).
 */
export function subjectOf(headers: readonly PayloadHeader[]): string | null {
  const field = headers.find((h) => h.name.toLowerCase() === 'subject');
  if (field === undefined) return null;
  let subject: string;
  try {
    subject = libmime.decodeWords(field.value).trim();
  } catch {
    subject = field.value.trim();
  }
  return subject === '' ? null : subject;
}

/** Reads an address field's values (mailparser's parseAddressHeader): names' encoded-words decoded. */
export type AddressParser = (values: string[]) => AddressObject;

/**
 * The addresses of the fields named `name` in `headers` (the first one only, as mailparser keeps
 * one From and one Reply-To, or every one), parsed with `parse`; `parsed` (mailparser's reading)
 * where the list has no such field (past MAX_HEADERS). Read from the header list, not from
 * mailparser's `from`/`to`: mailparser reads 8-bit header bytes as UTF-8 only, so a name sent in
 * raw Latin-1 ("J\xf6rg M\xfcller") came as "J\ufffdrg M\ufffdller", as the Subject did (subjectOf).
 */
export function addressesOf(
  headers: readonly PayloadHeader[],
  name: string,
  o: { all: boolean; parse: AddressParser; parsed: AddressObject | AddressObject[] | undefined },
): PayloadAddress[] {
  const values: string[] = [];
  for (const h of headers) {
    if (h.name.toLowerCase() !== name) continue;
    values.push(h.value);
    if (!o.all) break;
  }
  return addresses(values.length > 0 ? o.parse(values) : o.parsed);
}

/**
 * The Date field as an ISO timestamp; null when there is none or it does not parse (mailparser
 * puts the current time in place of a date it cannot read, which would be a false date).
 */
export function dateOf(headers: readonly PayloadHeader[]): string | null {
  const field = headers.find((h) => h.name.toLowerCase() === 'date');
  const date = field === undefined ? NaN : Date.parse(field.value);
  return Number.isNaN(date) ? null : new Date(date).toISOString();
}

/**
 * A file name as a plain name: no directories (a sender's "../../etc/passwd" must not become a
 * path in a careless receiver), no control characters, at most MAX_FILENAME characters with the
 * extension kept.
 */
export function safeFilename(name: string | undefined): string | null {
  if (!name) return null;
  const base = name.replace(/[\x00-\x1f\x7f]/g, '').split(/[/\\]/).pop()!.trim();
  if (base === '' || base === '.' || base === '..') return null;
  if (base.length <= MAX_FILENAME) return base;
  const dot = base.lastIndexOf('.');
  const ext = dot > 0 && base.length - dot <= 16 ? base.slice(dot) : '';
  return base.slice(0, MAX_FILENAME - ext.length) + ext;
}

export interface AttachmentOptions {
  inlineMax: number;
  url: (index: number) => string;
}

/** Each attachment with its content inlined up to `inlineMax` bytes, linked past it. */
export function attachmentList(list: readonly Attachment[], o: AttachmentOptions): PayloadAttachment[] {
  return list.map((a, index) => {
    const size = a.content.length;
    const base = { filename: safeFilename(a.filename), contentType: a.contentType, size, contentId: a.cid ?? null };
    return size <= o.inlineMax ? { ...base, content: a.content.toString('base64') } : { ...base, url: o.url(index) };
  });
}
