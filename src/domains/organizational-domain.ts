/**
 * The Organizational Domain of a name (RFC 7489 3.2): its public suffix, from the Public Suffix
 * List, plus one label ("mail.shop.co.uk" → "shop.co.uk"). DMARC policy discovery falls back to
 * the Organizational Domain's record when the domain has none of its own (RFC 7489 6.6.3).
 *
 * The list is the one tldts bundles (no fetch at run time; it moves with the package version).
 * Its private section counts too (RFC 7489 3.2 names the whole list; mailauth, which verifies
 * DMARC elsewhere in this project, reads it the same way).
 */
import { getDomain } from 'tldts';

const PSL = { allowIcannDomains: true, allowPrivateDomains: true } as const;

/** The Organizational Domain of `domain` (lower case, no root dot), or undefined when there is none (a bare public suffix). */
export function organizationalDomain(domain: string): string | undefined {
  return getDomain(domain, PSL) ?? undefined;
}
