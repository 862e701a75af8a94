/**
 * The most common message postrider composes, a text and an html part (multipart/alternative,
 * RFC 2046 5.1.4) without attachments, written without building MailComposer's tree: only the
 * root is a MimeNode (its header fields are what differs from message to message and where
 * nodemailer's encoding rules live), the two parts are written here. A part's MimeNode cost
 * more than its content (a random boundary base from OpenSSL, its header fields parsed and
 * rebuilt, the text's encoding chosen twice): about half of composing such a message.
 *
 * The bytes are MailComposer's, byte for byte: the root is made and given its fields as
 * MailComposer.compile() does, and each part's fields and encoding are MimeNode's choices for a
 * text part (test/unit/mime-alternative.test.ts compares the two on many messages). Any other
 * message gives null, and the caller composes it with MailComposer.
 */
import type { MailComposerOptions } from 'nodemailer/lib/mail-composer/index.js';
import { hasLongerLines, isPlainText } from 'nodemailer/lib/mime-funcs/index.js';
import MimeNode from 'nodemailer/lib/mime-node/index.js';
import { encodeContent, messageOf } from './mime-bytes.js';

/** The options this path reads; a message with any other (attachments, raw, amp, ...) goes to MailComposer. */
const COVERED = new Set(['from', 'to', 'cc', 'replyTo', 'subject', 'messageId', 'date', 'headers', 'newline', 'baseBoundary', 'disableFileAccess', 'disableUrlAccess', 'text', 'html', 'attachments']);

/** The root fields MailComposer.compile() sets, in its order, after the custom ones (header name, option). */
const ROOT_FIELDS: Array<[string, keyof MailComposerOptions]> = [
  ['from', 'from'], ['to', 'to'], ['cc', 'cc'], ['reply-to', 'replyTo'], ['subject', 'subject'], ['message-id', 'messageId'], ['date', 'date'],
];

/** MimeNode's own choice of text encoding (its private method), for a part with this content. */
type TextEncodingChooser = { _getTextEncoding(value: string): 'Q' | 'B' };

/** The message MailComposer would write for these options, or null when they are not a text and an html part alone. */
export function alternativeBytes(mail: MailComposerOptions): Buffer | null {
  const { text, html } = mail;
  if (typeof text !== 'string' || typeof html !== 'string' || !text || !html || mail.newline !== 'windows') return null;
  if (mail.attachments?.length) return null;
  for (const [key, value] of Object.entries(mail)) if (value !== undefined && !COVERED.has(key)) return null;

  // MailComposer._createAlternative's root, with compile()'s fields.
  const root = new MimeNode('multipart/alternative', {
    baseBoundary: mail.baseBoundary,
    disableUrlAccess: mail.disableUrlAccess,
    disableFileAccess: mail.disableFileAccess,
    newline: mail.newline,
  });
  if (mail.headers) root.addHeader(mail.headers as Parameters<MimeNode['addHeader']>[0]);
  for (const [header, option] of ROOT_FIELDS) {
    const value = mail[option];
    if (value) root.setHeader(header, value as Parameters<MimeNode['setHeader']>[1]);
  }
  root.messageId();

  const out: Buffer[] = [Buffer.from(root.buildHeaders() + '\r\n\r\n')];
  const boundary = String(root.boundary);
  const chooser = root as unknown as TextEncodingChooser;
  out.push(Buffer.from(`--${boundary}\r\n`));
  writePart(out, 'text/plain; charset=utf-8', text, chooser);
  out.push(Buffer.from(`\r\n--${boundary}\r\n`));
  writePart(out, 'text/html; charset=utf-8', html, chooser);
  out.push(Buffer.from(`\r\n--${boundary}--\r\n`));
  return messageOf(out);
}

/**
 * One text part as MimeNode writes it: 7bit when the text is plain ASCII without lines over 76
 * characters (MimeNode.setContent and getTransferEncoding), else quoted-printable or base64 by
 * its share of Latin letters.
 */
function writePart(out: Buffer[], contentType: string, content: string, chooser: TextEncodingChooser): void {
  const transferEncoding =
    isPlainText(content) && !hasLongerLines(content, 76) ? '7bit' : chooser._getTextEncoding(content) === 'Q' ? 'quoted-printable' : 'base64';
  out.push(Buffer.from(`Content-Type: ${contentType}\r\nContent-Transfer-Encoding: ${transferEncoding}\r\n\r\n`));
  out.push(encodeContent(content, transferEncoding, false));
}
