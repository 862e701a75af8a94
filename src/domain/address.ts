/**
 * Mail address rules, applied once at the boundary (HTTP and SMTP); inner code trusts the
 * normalized form. We accept the dot-atom and quoted-string local parts of RFC 5321 4.1.2 but
 * refuse what is only legal in theory and abused in practice: source routes ("@a:b@c", RFC 5321
 * appendix C), the "percent hack" (user%other@relay), bang paths (other!user@relay), routing
 * characters inside quoted local parts, and embedded CR/LF or NUL.
 * Internationalized local parts (RFC 6531) are accepted; domains are stored as A-labels.
 */
import { domainToASCII } from 'node:url';

export interface Address {
  email: string;
  name?: string;
}

/** Spec section 8 and RFC 5321 4.5.3.1.3: a path is at most 256 octets, an address 254. */
export const MAX_ADDRESS_LENGTH = 254;
const MAX_LOCAL_LENGTH = 64;

const ATEXT = "[A-Za-z0-9!#$&'*+/=?^_`{|}~\\-\\u0080-\\uFFFF]";
const DOT_ATOM = new RegExp(`^${ATEXT}+(\\.${ATEXT}+)*$`);
const QUOTED = /^"([\x20\x21\x23-\x5b\x5d-\x7e\u0080-\uffff]|\\[\x20-\x7e])*"$/;

export type AddressProblem = { code: string; message: string };

/** Returns the normalized address (domain lowercased, as A-labels) or a problem. */
export function normalizeEmail(input: string): { email: string } | { problem: AddressProblem } {
  if (/[\r\n\0]/.test(input)) return { problem: { code: 'invalid_format', message: 'must not contain line breaks' } };
  if (input.length > MAX_ADDRESS_LENGTH) return { problem: { code: 'max_length', message: `must be at most ${MAX_ADDRESS_LENGTH} characters` } };
  const at = input.lastIndexOf('@');
  if (at <= 0 || at === input.length - 1) return { problem: { code: 'invalid_format', message: 'must be an email address like name@example.com' } };
  const local = input.slice(0, at);
  const domain = input.slice(at + 1);
  if (local.length > MAX_LOCAL_LENGTH) return { problem: { code: 'invalid_format', message: 'local part must be at most 64 characters' } };
  if (!DOT_ATOM.test(local) && !QUOTED.test(local)) return { problem: { code: 'invalid_format', message: 'has an invalid local part' } };
  // Routing syntax in any form: "@relay:user" (source route), user%host (percent hack),
  // host!user (UUCP bang path), and the same inside a quoted local part ("user@host"@relay).
  if (/[%!@]/.test(local)) return { problem: { code: 'invalid_format', message: 'source routes, % and ! relaying are not accepted' } };
  // Legal inside quotes (RFC 5321 4.1.2), but the composer and the SMTP client (nodemailer) drop
  // them from an address: "<b>x</b>"@example.net went out as " b x /b "@example.net, another
  // mailbox, in the header and the envelope alike.
  if (/[<>]/.test(local)) return { problem: { code: 'invalid_format', message: 'must not have < or > in its local part' } };
  const ascii = normalizeDomain(domain);
  if (!ascii) return { problem: { code: 'invalid_format', message: 'has an invalid domain' } };
  const email = `${local}@${ascii}`;
  if (email.length > MAX_ADDRESS_LENGTH) return { problem: { code: 'max_length', message: `must be at most ${MAX_ADDRESS_LENGTH} characters` } };
  return { email };
}

/**
 * A name domainToASCII returns unchanged: lowercase letters, digits, dots and hyphens, no A-label
 * ("xn--", whose punycode it validates) and a last label that the URL standard does not read as
 * an IPv4 number (digits, or 0x and hex digits: "a.0x10" is refused, "1.2.3" becomes "1.2.0.3").
 * Nearly every address has such a domain; domainToASCII cost more than the rest of the address
 * checks together at SMTP submission's MAIL FROM and RCPT TO (bench smtp --profile).
 */
function isPlainHost(name: string): boolean {
  if (!/^[a-z0-9.-]+$/.test(name) || name.includes('xn--')) return false;
  return !/^(?:\d+|0x[0-9a-f]*)$/.test(name.slice(name.lastIndexOf('.') + 1));
}

/** Lowercased A-label form of a host name, or null when it is not a valid DNS name. */
export function normalizeDomain(domain: string): string | null {
  if (domain.startsWith('[')) return null; // address literals (RFC 5321 4.1.3) are not deliverable targets here
  const bare = domain.endsWith('.') ? domain.slice(0, -1) : domain;
  const ascii = isPlainHost(bare) ? bare : domainToASCII(bare).toLowerCase();
  if (!ascii || ascii.length > 253) return null;
  const labels = ascii.split('.');
  if (labels.length < 2) return null;
  const label = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;
  if (!labels.every((l) => label.test(l))) return null;
  if (/^\d+$/.test(labels[labels.length - 1])) return null; // a numeric TLD is an IP address
  return ascii;
}

export function domainOf(email: string): string {
  return email.slice(email.lastIndexOf('@') + 1);
}

/** The key under which a recipient is matched against suppressions and deny lists. */
export function recipientKey(email: string): string {
  return email.toLowerCase();
}
