/**
 * Sending-domain names as the API accepts them: normalized to lower-case A-labels (IDNs become
 * punycode, RFC 5890/5891 through the WHATWG URL host parser), syntax checked as host names
 * (RFC 1035 2.3.1/2.3.4, RFC 1123 2.1), and refused when reserved for tests and documentation.
 */
import { domainToASCII } from 'node:url';
import { hasNonAscii } from './ascii.js';

export type DomainNameProblem = { code: 'invalid_format' | 'reserved'; message: string };
export type DomainNameResult = { ok: true; name: string } | ({ ok: false } & DomainNameProblem);

/** RFC 1035 2.3.4: 255 octets on the wire, i.e. 253 characters in text form without the root dot. */
const MAX_NAME_LENGTH = 253;
const MAX_LABEL_LENGTH = 63;
/** LDH labels (letters, digits, hyphen; no hyphen at either end). Underscores are not host names. */
const LABEL = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/;

/**
 * Names nobody can own in the public DNS, so no mail should claim them: RFC 2606 and RFC 6761
 * (test, example, invalid, localhost and example.com/net/org), RFC 6762 (local), RFC 7686
 * (onion), RFC 8375 (home.arpa), RFC 9476 (alt) and the private-use "internal" TLD. Each entry
 * covers its subdomains too.
 */
export const RESERVED_DOMAINS: readonly string[] = [
  'test', 'example', 'invalid', 'localhost', 'local', 'onion', 'alt', 'internal',
  'example.com', 'example.net', 'example.org', 'home.arpa',
];

/** Normalizes and checks a domain name given by a client. Pure: no DNS lookups. */
export function normalizeDomainName(input: string, reserved: readonly string[] = RESERVED_DOMAINS): DomainNameResult {
  const fail = (code: DomainNameProblem['code'], message: string): DomainNameResult => ({ ok: false, code, message });
  let raw = input.toLowerCase();
  if (raw.endsWith('.')) raw = raw.slice(0, -1);
  if (raw === '') return fail('invalid_format', 'must be a domain name such as mail.acme.com');
  // ASCII other than letters, digits, hyphens and dots is refused before the URL host parser,
  // which would percent-decode ("a%41" → "aa") or pass through characters host names lack ("_", "*").
  const bad = /[^a-z0-9.\-\u0080-\uffff]/.exec(raw);
  if (bad) return fail('invalid_format', `must not contain ${JSON.stringify(bad[0])} (only letters, digits, hyphens and dots)`);
  // The URL host parser maps Unicode labels to punycode (UTS #46) and checks existing "xn--"
  // labels; '' means it refused the name.
  const name = domainToASCII(raw);
  if (!name) return fail('invalid_format', 'is not a valid internationalized domain name');
  if (name.length > MAX_NAME_LENGTH) return fail('invalid_format', `must be at most ${MAX_NAME_LENGTH} characters (in punycode form)`);
  const labels = name.split('.');
  if (labels.length < 2) return fail('invalid_format', 'must have at least two labels (e.g. acme.com)');
  for (const label of labels) {
    if (label.length === 0) return fail('invalid_format', 'must not contain empty labels');
    if (label.length > MAX_LABEL_LENGTH) return fail('invalid_format', `labels must be at most ${MAX_LABEL_LENGTH} characters`);
    if (!LABEL.test(label)) return fail('invalid_format', `label "${label}" may only hold letters, digits and inner hyphens`);
  }
  // RFC 3696 2: a top-level domain is never all-numeric, which also refuses IPv4 literals.
  if (/^[0-9]+$/.test(labels[labels.length - 1])) return fail('invalid_format', 'must be a domain name, not an IP address');
  const hit = reserved.find((r) => name === r || name.endsWith('.' + r));
  if (hit) return fail('reserved', `"${hit}" is reserved (RFC 2606/6761) and cannot send mail`);
  return { ok: true, name };
}

/**
 * A domain name as a sender names it, in the stored form (lower-case A-labels, no root dot):
 * case, surrounding white space, a root dot and U-labels normalized. No syntax check: a name
 * that is not registered simply finds nothing.
 */
export function lookupDomainName(domainName: string): string {
  const lower = domainName.trim().toLowerCase().replace(/\.$/, '');
  return hasNonAscii(lower) ? domainToASCII(lower) : lower;
}

/**
 * The A-label form of a lower-cased search needle holding U-labels (a list filter "bücher"
 * matches xn--bcher-kva.example); undefined for an ASCII needle or one the parser refuses.
 */
export function asciiNeedleOf(needle: string): string | undefined {
  return hasNonAscii(needle) ? domainToASCII(needle) || undefined : undefined;
}
