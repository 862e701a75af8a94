/**
 * The message the inbound benchmark sends to both servers: a customer's reply to a shop's
 * receipt, as it arrives at a support address from another provider: multipart/mixed with a
 * multipart/alternative (text with a quoted part, HTML) and a small PDF attachment, In-Reply-To
 * and References, DKIM-signed (RSA-2048, relaxed/relaxed, by nodemailer, not by the verifier
 * under test) by its From domain, which publishes SPF for 127.0.0.1 and a DMARC policy in the
 * bench DNS server. So every message costs the receiver the full verification: SPF, one DKIM
 * signature with its key lookup, DMARC.
 *
 * smtp-source -F sends a file line by line and ends each line with CRLF itself, so the file is
 * the signed message with LF line ends: on the wire it is byte for byte what was signed.
 */
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import nodemailer from 'nodemailer';
import { RECEIPT_LINES } from './message.mjs';

export const CUSTOMER_DOMAIN = 'customer-bench-postrider.com';
export const MAIL_FROM = `ann@${CUSTOMER_DOMAIN}`;
export const HELO = `mail.${CUSTOMER_DOMAIN}`;
const SELECTOR = 'bench2026';

const REPLY = [
  'Hello,',
  '',
  'the desk organiser arrived today, but one of its side panels is cracked (see the photo report',
  'attached). The notebooks are fine. Could you send a replacement panel, or should I return the',
  'whole organiser? I would rather keep it if a new panel can be sent, as the rest is in good shape.',
  '',
  'The parcel itself looked undamaged, so I suppose it happened before packing. I kept the box and',
  'the packing material in case the carrier needs to see them.',
  '',
  'Best regards,',
  'Ann Example',
];

/** A small PDF (a one-page damage report), about 2 KB. */
function pdfAttachment() {
  const text = Array.from({ length: 24 }, (_, i) => `BT /F1 10 Tf 40 ${760 - i * 14} Td (Damage report line ${i + 1}: side panel cracked along the grain, 12 cm) Tj ET`).join('\n');
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    `<< /Length ${text.length} >>\nstream\n${text}\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  const body = objects.map((o, i) => `${i + 1} 0 obj\n${o}\nendobj\n`).join('');
  return Buffer.from(`%PDF-1.4\n${body}trailer\n<< /Root 1 0 R >>\n%%EOF\n`, 'latin1');
}

/**
 * Builds and signs the message, publishes the customer domain's SPF, DKIM key and DMARC policy
 * in `dns`, and writes the file smtp-source sends. Returns { file, raw (CRLF), attachmentBytes }.
 */
export async function inboundMessage(dns, { to }) {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const p = publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
  dns.set(CUSTOMER_DOMAIN, 'TXT', ['v=spf1 ip4:127.0.0.1 -all']);
  dns.set(`${SELECTOR}._domainkey.${CUSTOMER_DOMAIN}`, 'TXT', [`v=DKIM1; k=rsa; p=${p}`]);
  dns.set(`_dmarc.${CUSTOMER_DOMAIN}`, 'TXT', ['v=DMARC1; p=reject; adkim=r; aspf=r']);
  const quoted = RECEIPT_LINES.map((l) => `> ${l}`);
  const text = [...REPLY, '', 'On Mon, 2 Mar 2026 at 10:14, Bench Shop <receipts@shop-bench-postrider.com> wrote:', ...quoted].join('\n') + '\n';
  const html =
    '<html><body style="font-family:sans-serif">' +
    REPLY.map((l) => (l ? `<p>${l}</p>` : '')).join('') +
    '<blockquote type="cite"><h1>Thank you for your order</h1>' +
    RECEIPT_LINES.map((l) => `<p>${l}</p>`).join('') +
    '</blockquote></body></html>';
  const attachment = pdfAttachment();
  const transport = nodemailer.createTransport({ streamTransport: true, buffer: true });
  const info = await transport.sendMail({
    from: { name: 'Ann Example', address: MAIL_FROM },
    to,
    subject: 'Re: Your receipt for order 10234',
    messageId: `<${randomUUID()}@${CUSTOMER_DOMAIN}>`,
    inReplyTo: '<receipt-10234@shop-bench-postrider.com>',
    references: ['<receipt-10234@shop-bench-postrider.com>'],
    text,
    html,
    attachments: [{ filename: 'damage-report.pdf', content: attachment, contentType: 'application/pdf' }],
    dkim: { domainName: CUSTOMER_DOMAIN, keySelector: SELECTOR, privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }) },
  });
  // The Received fields the sender's provider adds above its signature (not signed, as in real mail).
  const received =
    `Received: from submit.${CUSTOMER_DOMAIN} (submit.${CUSTOMER_DOMAIN} [10.1.2.4])\r\n\tby ${HELO} with ESMTPS id 8c1f2a; ${new Date().toUTCString()}\r\n` +
    `Received: from [10.1.2.3] (client.${CUSTOMER_DOMAIN} [10.1.2.3])\r\n\tby submit.${CUSTOMER_DOMAIN} with ESMTPSA id 4711; ${new Date().toUTCString()}\r\n`;
  const raw = Buffer.concat([Buffer.from(received), info.message]);
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-bench-inbound-')), 'message.eml');
  fs.writeFileSync(file, raw.toString('latin1').replace(/\r\n/g, '\n'));
  return { file, raw, attachmentBytes: attachment.length, remove: () => fs.rmSync(path.dirname(file), { recursive: true, force: true }) };
}
