/**
 * What a message needs of the receiver's SMTP service extensions (its EHLO reply) before it may
 * be sent, and the permanent failure when the receiver does not offer it:
 *
 *  - SMTPUTF8 (RFC 6531): a non-ASCII envelope address (postrider accepts internationalized local
 *    parts), or non-ASCII octets in the header block (RFC 6532 3: UTF-8 header fields, which the
 *    API writes for such an address in To, and an SMTP client may submit). RFC 6531 3.4: the
 *    client then MUST give SMTPUTF8 on MAIL FROM; 3.2: when the server does not offer it, such a
 *    message must not be sent, and the sender gets a non-delivery (5.6.7, RFC 6531 3.6 / 6532).
 *  - 8BITMIME (RFC 6152): octets over 127 anywhere in the message. BODY=8BITMIME goes on MAIL FROM
 *    when the server offers it. When it does not, RFC 6152 3 allows either a conversion to 7 bit
 *    (quoted-printable or base64) or a non-delivery. postrider bounces (5.6.3): the message was
 *    DKIM-signed at intake, before any receiver was known (the finishing stage's worker), and the
 *    signature's body hash (RFC 6376 3.7, relaxed body canonicalization keeps every octet of the
 *    content) would no longer match a converted body, so the receiver would see a broken
 *    signature and DMARC would fail; re-signing at delivery would need the signing keys there.
 *    Mail composed by the API is 7 bit already (quoted-printable, base64, RFC 2047 words);
 *    8-bit bodies come from SMTP submission, and nearly every receiver offers 8BITMIME.
 *
 * Nothing of it is checked for a message that is all ASCII, the common case: one native scan.
 */
import { isAscii } from 'node:buffer';
import type SMTPConnection from 'nodemailer/lib/smtp-connection/index.js';
import { hasNonAscii } from '../domain/ascii.js';
import { headerEnd } from '../domain/raw-headers.js';
import type { ParsedReply } from '../domain/smtp-reply.js';

export interface MailNeeds {
  /** SMTPUTF8 on MAIL FROM: a non-ASCII address or header block. */
  smtpUtf8: boolean;
  /** BODY=8BITMIME on MAIL FROM: any octet over 127 in the message. */
  eightBit: boolean;
}

export function mailNeeds(sender: string, recipients: readonly string[], message: Buffer): MailNeeds {
  const addresses = hasNonAscii(sender) || recipients.some(hasNonAscii);
  if (isAscii(message)) return { smtpUtf8: addresses, eightBit: false };
  return { smtpUtf8: addresses || !isAscii(headerBlock(message)), eightBit: true };
}

/**
 * The reply postrider gives itself when the receiver lacks an extension the message needs
 * (`extensions`: the keywords of its EHLO reply); undefined when it may be sent. The codes say it
 * is permanent and about the message, not the address (RFC 3463 X.6.x: soft-bounced, never
 * suppressed, bounce-rules.ts status-content), so it is neither retried nor sent to the next MX.
 */
export function missingExtension(needs: MailNeeds, extensions: readonly string[] | undefined, mx: string): ParsedReply | undefined {
  // A nodemailer that does not keep the EHLO keywords: sent as before, the receiver decides.
  if (!extensions) return undefined;
  if (needs.smtpUtf8 && !extensions.includes('SMTPUTF8')) {
    return {
      code: 554,
      enhancedCode: '5.6.7',
      text: `not sent: the message has a non-ASCII address or header field and ${mx} does not offer SMTPUTF8 (RFC 6531 3.2)`,
    };
  }
  if (needs.eightBit && !extensions.includes('8BITMIME')) {
    return {
      code: 554,
      enhancedCode: '5.6.3',
      text: `not sent: the message has 8-bit content and ${mx} does not offer 8BITMIME (RFC 6152 3); converting it to 7 bit would break its DKIM signature`,
    };
  }
  return undefined;
}

/** The SMTPConnection internals read and wrapped here (nodemailer 10.x). */
interface CommandInternals {
  _sendCommand(command: string): void;
  _supportedExtensions?: string[];
}

/** The keywords of the server's EHLO reply as nodemailer read them; undefined when it keeps none. */
export function offeredExtensions(conn: SMTPConnection): readonly string[] | undefined {
  const extensions = (conn as unknown as CommandInternals)._supportedExtensions;
  return Array.isArray(extensions) ? extensions : undefined;
}

/**
 * nodemailer (10.x _setEnvelope) puts SMTPUTF8 on MAIL FROM for a non-ASCII address only, not for
 * UTF-8 header fields, which RFC 6531 3.4 asks it for too: while `wanted()` says so, the
 * connection's MAIL FROM gets it. It is only asked once the server offers SMTPUTF8
 * (missingExtension): nodemailer has no option of its own for it.
 */
export function installSmtpUtf8(conn: SMTPConnection, wanted: () => boolean): void {
  const c = conn as unknown as CommandInternals;
  if (typeof c._sendCommand !== 'function') return;
  const send = c._sendCommand.bind(conn);
  c._sendCommand = (command) => send(command.startsWith('MAIL FROM:') && wanted() && !/ SMTPUTF8(?: |$)/.test(command) ? `${command} SMTPUTF8` : command);
}

/** Up to the blank line that ends the header block (CRLF: stored messages have CRLF line ends). */
function headerBlock(message: Buffer): Buffer {
  const end = headerEnd(message);
  return end < 0 ? message : message.subarray(0, end);
}
