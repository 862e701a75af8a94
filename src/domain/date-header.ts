/**
 * The date-time of a Date header field (RFC 5322 3.3): "Tue, 24 Nov 2026 05:44:22 +0000". The
 * zone is numeric; "GMT", which Date.toUTCString writes, is the obsolete form (RFC 5322 4.3) that
 * generators must not write. Same output as the composer of the HTTP path (nodemailer's MimeNode
 * writes toUTCString with GMT replaced by +0000).
 */
export function rfc5322Date(date: Date): string {
  return date.toUTCString().replace(/GMT$/, '+0000');
}
