/**
 * Builds the RFC 5322 message (headers and MIME body) with nodemailer's MailComposer.
 *
 * MailComposer picks the MIME structure from what it is given: text and html become
 * multipart/alternative (RFC 2046 5.1.4), attachments with a Content-ID next to html become
 * multipart/related (RFC 2387) so the html can reference them as `cid:` URLs (RFC 2392), and
 * other attachments wrap everything in multipart/mixed.
 */
import MailComposer from 'nodemailer/lib/mail-composer/index.js';
import type { MailComposerAttachment, MailComposerOptions } from 'nodemailer/lib/mail-composer/index.js';
import { TaskError } from './errors.js';
import { alternativeBytes } from './mime-alternative.js';
import { mimeBytes } from './mime-bytes.js';
import { headerSafe } from './render.js';

export interface Address {
  email: string;
  name?: string;
}

export interface ComposeAttachment {
  /** The file content, base64 encoded. */
  content: string;
  fileName: string;
  /** Detected from the file name when missing. */
  contentType?: string;
  /** Makes the attachment addressable from the html as `cid:<contentId>`. */
  contentId?: string;
  disposition?: 'attachment' | 'inline';
}

export interface ListUnsubscribe {
  /** The one-click unsubscribe URL (RFC 8058 wants HTTPS). */
  url: string;
  /** An optional `mailto:` alternative (RFC 2369 3.2). */
  mailto?: string;
}

export interface ComposeInput {
  from: Address;
  to: Address[];
  cc?: Address[];
  replyTo?: Address[];
  subject: string;
  html?: string;
  text?: string;
  attachments?: ComposeAttachment[];
  /** Custom header fields, already validated by the caller. */
  headers?: Record<string, string>;
  /** The Message-ID with its angle brackets, e.g. `<uuid@example.com>` (RFC 5322 3.6.4). */
  messageId: string;
  /** ISO 8601 timestamp of the Date field. */
  date: string;
  /**
   * The shared part of the multipart boundaries. Given (the message's id), composing the same
   * input twice gives the same bytes: the finishing stage composes after the commit and again
   * after a crash, and both must be the message the 200 described. Absent: random.
   */
  baseBoundary?: string;
  listUnsubscribe?: ListUnsubscribe;
}

export async function composeMessage(input: ComposeInput): Promise<Buffer> {
  const date = new Date(input.date);
  if (Number.isNaN(date.getTime())) {
    throw new TaskError('internal_error', `compose: date "${input.date}" is not a valid timestamp`, 'date');
  }

  const options: MailComposerOptions = {
    from: toMailbox(input.from),
    to: input.to.map(toMailbox),
    // Bcc is deliberately absent: Bcc recipients live in the SMTP envelope only. Writing them
    // into the header would disclose them to every recipient (RFC 5322 3.6.3).
    subject: headerSafe(input.subject),
    messageId: input.messageId,
    // A Date object, not the ISO string: MailComposer would copy a string verbatim, and ISO 8601
    // is not the date-time syntax of RFC 5322 3.3. From a Date it writes `Tue, 02 Jan 2024 ...`.
    date,
    headers: buildExtraHeaders(input),
    // The message goes out over SMTP, which requires CRLF line ends (RFC 5321 2.3.8); the
    // composer emits LF inside bodies otherwise. The DKIM body hash is computed on these bytes.
    newline: 'windows',
    // Content is always inline data; never let a path or URL make the composer read a file or
    // fetch a URL on a caller's behalf.
    disableFileAccess: true,
    disableUrlAccess: true,
  };
  if (input.baseBoundary) options.baseBoundary = input.baseBoundary;
  if (input.cc?.length) options.cc = input.cc.map(toMailbox);
  if (input.replyTo?.length) options.replyTo = input.replyTo.map(toMailbox);
  if (input.text !== undefined) options.text = input.text;
  if (input.html !== undefined) options.html = input.html;
  if (input.attachments?.length) options.attachments = input.attachments.map(toAttachment);

  // A text and an html part alone are written directly (mime-alternative.ts); anything else is
  // MailComposer's tree written out in one pass (mime-bytes.ts), or streamed by build() for what
  // that pass does not cover. All three give the same bytes.
  const alternative = alternativeBytes(options);
  if (alternative) return alternative;
  const root = new MailComposer(options).compile();
  return mimeBytes(root) ?? root.build();
}

function toMailbox(a: Address): { name: string; address: string } {
  return { name: a.name ?? '', address: a.email };
}

function toAttachment(a: ComposeAttachment): MailComposerAttachment {
  const att: MailComposerAttachment = {
    content: Buffer.from(a.content, 'base64'),
    filename: a.fileName,
  };
  if (a.contentType) att.contentType = a.contentType;
  if (a.contentId) att.cid = a.contentId;
  if (a.disposition) att.contentDisposition = a.disposition;
  return att;
}

/**
 * The custom headers plus the List-Unsubscribe fields. MailComposer sets its own fields (From,
 * To, Cc, Subject, Message-ID, Date, ...) after these and replaces a custom field of the same
 * name, so a custom header cannot override them; a custom Bcc would be dropped as well.
 */
function buildExtraHeaders(input: ComposeInput): Record<string, string> {
  const headers: Record<string, string> = { ...input.headers };
  const unsub = input.listUnsubscribe;
  if (unsub) {
    const url = normalizeUri(unsub.url, 'listUnsubscribe.url');
    // RFC 2369 3.2: each URI in angle brackets, in order of preference, separated by commas.
    const uris = [`<${url}>`];
    if (unsub.mailto) uris.push(`<${normalizeUri(unsub.mailto, 'listUnsubscribe.mailto')}>`);
    headers['List-Unsubscribe'] = uris.join(', ');
    // RFC 8058 3.1: one-click unsubscribe is an HTTPS POST to the List-Unsubscribe URI; the
    // List-Unsubscribe-Post field announces it. Without an HTTPS URI the field would promise a
    // POST endpoint that receivers must not use, so it is only written for https.
    if (url.startsWith('https:')) headers['List-Unsubscribe-Post'] = 'List-Unsubscribe=One-Click';
  }
  return headers;
}

/**
 * Serializes a URI the way the WHATWG URL parser does: percent-encodes spaces, `<`, `>` and
 * non-ASCII characters, which would otherwise break the angle brackets of RFC 2369 or get
 * MIME-encoded by the composer into something no receiver reads as a URI.
 */
function normalizeUri(value: string, field: string): string {
  try {
    return new URL(value).href;
  } catch (err) {
    throw new TaskError('internal_error', `compose: ${field} is not a valid URI`, field, { cause: err });
  }
}
