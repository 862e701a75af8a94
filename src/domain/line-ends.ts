/**
 * Line ends of a message as SMTP carries them: CRLF only (RFC 5321 2.3.8, RFC 5322 2.1; CR and
 * LF "MUST only occur together as CRLF"). Delivery sends a stored message's bare CR and bare LF
 * as CRLF (delivery/smtp-data.ts, as nodemailer's DataStream does), so a message is made so before
 * it is checked and signed: otherwise the check reads one header block and the receiver another
 * ("Subject: x<CR>From: ceo@bank.example" is one field here and two there, "<CR>Bcc: ..." a Bcc
 * that is never removed), and the DKIM body hash is of bytes that are not sent.
 */
const CR = 0x0d;
const LF = 0x0a;
const CRLF = Buffer.from('\r\n');

/** `raw` with each bare CR and bare LF replaced by CRLF; `raw` itself when it has none. */
export function crlfLineEnds(raw: Buffer): Buffer {
  const parts: Buffer[] = [];
  let from = 0;
  let cr = raw.indexOf(CR);
  let lf = raw.indexOf(LF);
  while (cr !== -1 || lf !== -1) {
    if (cr !== -1 && (lf === -1 || cr < lf)) {
      if (lf === cr + 1) {
        cr = raw.indexOf(CR, cr + 2);
        lf = raw.indexOf(LF, lf + 1);
        continue;
      }
      parts.push(raw.subarray(from, cr), CRLF);
      from = cr + 1;
      cr = raw.indexOf(CR, from);
    } else {
      parts.push(raw.subarray(from, lf), CRLF);
      from = lf + 1;
      lf = raw.indexOf(LF, from);
    }
  }
  if (parts.length === 0) return raw;
  parts.push(raw.subarray(from));
  return Buffer.concat(parts);
}
