/**
 * The recipient of a `mailto:` rua (RFC 8460 3, a URI of RFC 6068): one plain address, or a
 * reason to refuse it.
 *
 * The URI comes from a third party's DNS (the `_smtp._tls` TXT record) and ends up in the To
 * field and the RCPT TO of a message we sign, so anything that is not exactly one addr-spec is
 * refused rather than repaired: percent-encoded or literal control characters (CR/LF would start
 * a new header field or SMTP command), white space, quotes, angle brackets, "," or ";" (a second
 * address or a display name), and whatever normalizeEmail refuses (source routes, "%" and "!"
 * relaying, an invalid domain). RFC 6068 hfields ("?subject=...") are ignored: a report's
 * Subject is fixed by RFC 8460 5.3, and the receiver reads the headers it defines.
 */
import { normalizeEmail } from '../domain/address.js';

export type MailtoRecipient = { ok: true; email: string } | { ok: false; reason: string };

// RFC 6068 2: "mailto:" [ to ] [ hfields ]; the scheme name is case-insensitive (RFC 3986 3.1).
const MAILTO = /^mailto:([^?]*)(?:\?.*)?$/is;
// Never part of a dot-atom addr-spec (RFC 5322 3.2.3, 3.4.1); CR, LF and NUL among them.
const NOT_IN_ADDRESS = /[\x00-\x20\x7f"<>(),;:\\[\]]/;

export function mailtoRecipient(uri: string): MailtoRecipient {
  const m = MAILTO.exec(uri);
  if (!m) return { ok: false, reason: 'not a mailto: URI' };
  let to: string;
  try {
    to = decodeURIComponent(m[1]);
  } catch {
    return { ok: false, reason: 'the address has a malformed percent-encoding' };
  }
  if (to === '') return { ok: false, reason: 'the URI names no address' };
  if (NOT_IN_ADDRESS.test(to)) {
    return { ok: false, reason: 'the address is not one plain local@domain (control characters, spaces, quotes, brackets, "," or ";")' };
  }
  const n = normalizeEmail(to);
  if ('problem' in n) return { ok: false, reason: `the address ${n.problem.message}` };
  return { ok: true, email: n.email };
}
