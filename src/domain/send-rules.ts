/**
 * Send rules that span fields or need more than a JSON Schema (spec sections 4.10, 4.11, 8 and
 * DESIGN.md): address syntax and normalization, the 50-recipient total, template XOR content,
 * custom header names/values/size, attachment encoding and blocked types. Pure: takes the
 * schema-valid body, collects every problem into a FieldErrorList, returns normalized values.
 */
import { normalizeEmail, type Address } from './address.js';
import type { FieldErrorList } from './errors.js';
import { mediaTypeEssence } from './media-type.js';
import { trimEndOf } from './trim-end.js';
import type { Tracking } from './types.js';

export const LIMITS = {
  recipientsPerMessage: 50,
  headersTotalChars: 5000,
  /** A message's subject (spec section 8); the schema holds a top-level subject to it, checkRenderedSubject a template's. */
  subjectChars: 256,
} as const;

export interface TemplateInput {
  subject?: string;
  html?: string;
  text?: string;
  inlineStyles?: boolean;
  data?: Record<string, unknown>;
}

/**
 * A stored template named by a send (issue 34) instead of its content: by `id` or by `alias`
 * (exactly one), its `version` or the active one, with the send's `data`.
 */
export interface StoredTemplateRef {
  id?: string;
  alias?: string;
  version?: number;
  data?: Record<string, unknown>;
}

/** A send's `template` as the wire has it: inline content, or a stored template's reference. */
export type SendTemplateInput = TemplateInput & StoredTemplateRef;

/** The inline parts, which a stored template's version holds instead. */
const INLINE_PARTS = ['subject', 'html', 'text', 'inlineStyles'] as const;

/** A template that names a stored one (any of id, alias, version), rather than carrying its parts. */
export function namesStoredTemplate(t: SendTemplateInput): boolean {
  return t.id !== undefined || t.alias !== undefined || t.version !== undefined;
}

/**
 * The stored template a send names, when its reference is well formed (exactly one of id and
 * alias, no inline part): `field` is the one given (`/id` or `/alias`), for the field error of
 * a name that is not found. Undefined otherwise (checkTemplateInput reports why).
 */
export function storedRefOf(t: SendTemplateInput): { name: string; field: '/id' | '/alias'; version?: number } | undefined {
  if (!namesStoredTemplate(t) || (t.id === undefined) === (t.alias === undefined)) return undefined;
  if (INLINE_PARTS.some((k) => t[k] !== undefined)) return undefined;
  return t.id !== undefined ? { name: t.id, field: '/id', version: t.version } : { name: t.alias!, field: '/alias', version: t.version };
}

export interface AttachmentInput {
  content: string;
  fileName: string;
  contentId?: string;
  contentType?: string;
  disposition?: 'attachment' | 'inline';
}

export interface Attachment {
  /** base64, whitespace removed */
  content: string;
  fileName: string;
  contentType: string;
  contentId?: string;
  disposition: 'attachment' | 'inline';
  /** decoded size in bytes */
  size: number;
}

export interface Recipients {
  to: Address[];
  cc: Address[];
  bcc: Address[];
}

/**
 * Headers a sender may not set: the composer writes them, the DKIM signature covers them, or
 * they describe the transport (RFC 5322 3.6, RFC 5321 4.4, RFC 6376).
 */
const STRUCTURAL_HEADERS = new Set([
  'from', 'to', 'cc', 'bcc', 'reply-to', 'sender', 'subject', 'date', 'message-id', 'mime-version',
  'content-type', 'content-transfer-encoding', 'content-disposition', 'content-id', 'dkim-signature',
  'return-path', 'received', 'arc-seal', 'arc-message-signature', 'arc-authentication-results',
  'authentication-results', 'x-postrider-message-id', 'x-tags', 'x-metadata',
]);
/** Broadcasts always carry postrider's own RFC 8058 one-click unsubscribe headers. */
const BROADCAST_RESERVED = new Set(['list-unsubscribe', 'list-unsubscribe-post']);

/** Executable and script types mail filters reject or that carry malware (by extension). */
const BLOCKED_EXTENSIONS = new Set([
  'ade', 'adp', 'apk', 'appx', 'bat', 'cab', 'chm', 'cmd', 'com', 'cpl', 'dll', 'dmg', 'exe', 'hta', 'ins', 'iso',
  'isp', 'jar', 'js', 'jse', 'lib', 'lnk', 'mde', 'msc', 'msi', 'msix', 'msp', 'mst', 'nsh', 'pif', 'ps1', 'psm1',
  'reg', 'scr', 'sct', 'shb', 'sh', 'sys', 'vb', 'vbe', 'vbs', 'vxd', 'wsc', 'wsf', 'wsh',
]);
const BLOCKED_TYPES = new Set([
  'application/x-msdownload', 'application/x-msdos-program', 'application/x-ms-installer', 'application/x-msi',
  'application/vnd.microsoft.portable-executable', 'application/x-dosexec', 'application/x-executable',
  'application/x-sh', 'application/x-bat', 'application/x-csh', 'application/javascript', 'text/javascript',
  'application/x-javascript', 'application/java-archive', 'application/x-java-archive', 'application/hta',
  'application/x-ms-shortcut', 'application/vnd.ms-cab-compressed', 'application/x-apple-diskimage',
  'application/vnd.android.package-archive', 'text/vbscript', 'application/x-powershell',
]);

export function normalizeAddress(a: Address, pointer: string, errors: FieldErrorList): Address {
  const r = normalizeEmail(a.email);
  if ('problem' in r) {
    errors.add(`${pointer}/email`, r.problem.code, r.problem.message);
    return a;
  }
  return a.name ? { email: r.email, name: a.name } : { email: r.email };
}

export function normalizeAddresses(list: Address[] | undefined, pointer: string, errors: FieldErrorList): Address[] {
  return (list ?? []).map((a, i) => normalizeAddress(a, `${pointer}/${i}`, errors));
}

/** to + cc + bcc: at least one, at most 50 (spec section 8); `base` is the pointer prefix. */
export function normalizeRecipients(input: Partial<Recipients>, base: string, errors: FieldErrorList): Recipients {
  const r = {
    to: normalizeAddresses(input.to, `${base}/to`, errors),
    cc: normalizeAddresses(input.cc, `${base}/cc`, errors),
    bcc: normalizeAddresses(input.bcc, `${base}/bcc`, errors),
  };
  const total = r.to.length + r.cc.length + r.bcc.length;
  if (total === 0) errors.add(`${base}/to`, 'required', 'at least one recipient in to, cc or bcc is required');
  if (total > LIMITS.recipientsPerMessage) {
    errors.add(`${base}/to`, 'max_items', `to, cc and bcc together may have at most ${LIMITS.recipientsPerMessage} recipients (got ${total})`);
  }
  return r;
}

/** DESIGN.md: a template, or top-level subject + html/text; never both. */
export function checkContent(
  body: { subject?: string; html?: string; text?: string; template?: SendTemplateInput },
  errors: FieldErrorList,
): void {
  if (body.template) {
    for (const f of ['subject', 'html', 'text'] as const) {
      if (body[f] !== undefined) errors.add(`/${f}`, 'conflict', 'must not be given together with template');
    }
    checkTemplateInput(body.template, '/template', errors);
    return;
  }
  if (body.subject === undefined || body.subject.trim() === '') errors.add('/subject', 'required', 'is required (or send a template)');
  if (!body.html && !body.text) errors.add('/html', 'required', 'html or text is required (or send a template)');
}

/** A send's template: an inline one's required parts, or a stored one's reference (checkStoredRef). */
export function checkTemplateInput(t: SendTemplateInput, pointer: string, errors: FieldErrorList): void {
  if (namesStoredTemplate(t)) checkStoredRef(t, pointer, errors);
  else checkTemplate(t, pointer, errors);
}

/**
 * A stored template's reference: exactly one of id and alias, and none of the inline parts
 * (the version holds them). Whether the template and version exist is the store's to say
 * (submission/stored-template.ts).
 */
function checkStoredRef(t: SendTemplateInput, pointer: string, errors: FieldErrorList): void {
  if (t.id !== undefined && t.alias !== undefined) errors.add(`${pointer}/alias`, 'conflict', 'must not be given together with id: name the template by one of them');
  if (t.id === undefined && t.alias === undefined) errors.add(`${pointer}/id`, 'required', 'id or alias names the stored template (version needs one of them)');
  for (const k of INLINE_PARTS) {
    if (t[k] !== undefined) errors.add(`${pointer}/${k}`, 'conflict', 'must not be given together with a stored template (id, alias, version): its version holds the content');
  }
}

export function checkTemplate(t: TemplateInput, pointer: string, errors: FieldErrorList): void {
  if (t.subject === undefined || t.subject.trim() === '') errors.add(`${pointer}/subject`, 'required', 'is required');
  if (!t.html && !t.text) errors.add(`${pointer}/html`, 'required', 'html or text is required');
}

/**
 * A template's subject as rendered is a message's subject, held to its 256 characters (spec
 * section 8) like a top-level subject: the template's own text may be longer (send-schemas.ts,
 * 2,048) since variables and helpers shrink or grow it. Characters are code points, as the
 * schema counts a top-level subject's.
 */
export function checkRenderedSubject(subject: string, pointer: string, errors: FieldErrorList): void {
  if (subject.length <= LIMITS.subjectChars) return;
  const surrogatePairs = subject.match(/[\uD800-\uDBFF][\uDC00-\uDFFF]/g)?.length ?? 0;
  if (subject.length - surrogatePairs > LIMITS.subjectChars) errors.add(pointer, 'max_length', `must be at most ${LIMITS.subjectChars} characters once rendered`);
}

/** Custom headers: RFC 5322 2.2 field names, no CR/LF in values, 5,000 characters in total. */
export function normalizeHeaders(
  headers: Record<string, string> | undefined,
  pointer: string,
  errors: FieldErrorList,
  opts: { broadcast?: boolean } = {},
): Record<string, string> {
  const out: Record<string, string> = {};
  let total = 0;
  for (const [name, value] of Object.entries(headers ?? {})) {
    const p = `${pointer}/${name.replace(/~/g, '~0').replace(/\//g, '~1')}`;
    total += name.length + value.length;
    if (!/^[\x21-\x39\x3b-\x7e]{1,76}$/.test(name)) {
      errors.add(p, 'invalid_format', 'header names are 1-76 printable ASCII characters without ":"');
      continue;
    }
    const lower = name.toLowerCase();
    if (STRUCTURAL_HEADERS.has(lower) || (opts.broadcast && BROADCAST_RESERVED.has(lower))) {
      errors.add(p, 'forbidden_header', `${name} is set by postrider and cannot be overridden`);
      continue;
    }
    if (/[\r\n\0]/.test(value)) {
      errors.add(p, 'invalid_format', 'header values must not contain line breaks');
      continue;
    }
    out[name] = value;
  }
  if (total > LIMITS.headersTotalChars) {
    errors.add(pointer, 'max_length', `custom headers may have at most ${LIMITS.headersTotalChars} characters in total (got ${total})`);
  }
  return out;
}

export function normalizeMetadata(meta: Record<string, string | number | boolean> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(meta ?? {})) out[k] = String(v);
  return out;
}

/**
 * Base64 with its padding (RFC 4648 section 4), white space already removed. One search for a
 * character outside the alphabet and its pad, then where the pad sits: the anchored form
 * /^[A-Za-z0-9+/]*={0,2}$/ took 120-130 ms on the 24 MB of an 18 MB attachment in the daemon
 * (against 15 ms for this search), all on the main thread.
 */
export function isBase64(s: string): boolean {
  if (s.length % 4 !== 0 || /[^A-Za-z0-9+/=]/.test(s)) return false;
  const pad = s.indexOf('=');
  return pad === -1 || pad === s.length - 1 || (pad === s.length - 2 && s.charCodeAt(s.length - 1) === 0x3d);
}

/** Base64 content, blocked executable types (by extension and by declared type). */
export function normalizeAttachments(list: AttachmentInput[] | undefined, pointer: string, errors: FieldErrorList): Attachment[] {
  return (list ?? []).map((a, i) => {
    const p = `${pointer}/${i}`;
    const content = a.content.replace(/\s+/g, '');
    // Here rather than as the schema's minLength: ajv counts a string's characters one by one for
    // it (ucs2length), 60 ms for the 24 MB of an 18 MB attachment, all on the main thread.
    if (content === '') errors.add(`${p}/content`, 'min_length', 'must not be empty');
    else if (!isBase64(content)) errors.add(`${p}/content`, 'invalid_format', 'must be base64');
    if (/[\\/]/.test(a.fileName)) errors.add(`${p}/fileName`, 'invalid_format', 'must not contain path separators');
    // Windows drops trailing dots and spaces from file names: "a.exe." and "a.exe " open as a.exe.
    const asSaved = trimEndOf(a.fileName, '. ');
    const ext = asSaved.toLowerCase().split('.').pop() ?? '';
    if (asSaved.includes('.') && BLOCKED_EXTENSIONS.has(ext)) {
      errors.add(`${p}/fileName`, 'blocked_type', `.${ext} files are not accepted (executable content)`);
    }
    const contentType = (a.contentType ?? guessType(ext)).toLowerCase();
    // By the type without its parameters: "application/x-msdownload; name=a.pdf" is blocked too.
    if (BLOCKED_TYPES.has(mediaTypeEssence(contentType))) errors.add(`${p}/contentType`, 'blocked_type', `${contentType} is not accepted (executable content)`);
    const padding = content.endsWith('==') ? 2 : content.endsWith('=') ? 1 : 0;
    return {
      content,
      fileName: a.fileName,
      contentType,
      contentId: a.contentId,
      disposition: a.disposition ?? (a.contentId ? 'inline' : 'attachment'),
      size: Math.max(0, (content.length / 4) * 3 - padding),
    };
  });
}

const TYPES: Record<string, string> = {
  pdf: 'application/pdf', png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', gif: 'image/gif', webp: 'image/webp',
  svg: 'image/svg+xml', txt: 'text/plain', csv: 'text/csv', html: 'text/html', htm: 'text/html', ics: 'text/calendar',
  json: 'application/json', xml: 'application/xml', zip: 'application/zip', doc: 'application/msword',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', xls: 'application/vnd.ms-excel',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
};

function guessType(ext: string): string {
  return TYPES[ext] ?? 'application/octet-stream';
}

export function mergeTracking(channel: Tracking, override: Partial<Tracking> | undefined): Tracking {
  return { links: override?.links ?? channel.links, opens: override?.opens ?? channel.opens };
}
