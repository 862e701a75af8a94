/**
 * The DNS mailauth sees when it verifies a received message: postrider's own resolver
 * (dns/resolver.ts: its servers, cache and timeouts, the test DNS server in tests), never the
 * system's, in the shape mailauth asks for (node's dns.resolve: records, or an error whose `code`
 * says NXDOMAIN, NODATA or a failure).
 *
 * Bounded per message: a message chooses the names looked up (every DKIM-Signature names a key,
 * RFC 6376 3.6.2.1; the SPF record of its MAIL FROM domain names more, up to 10 mechanisms, RFC
 * 7208 4.6.4), so one message gets at most `maxLookups` queries and none after `deadline`. Past
 * either, a lookup fails like a timed-out one, which mailauth reports as `temperror` (RFC 7208
 * 2.6.6, RFC 6376 3.9, RFC 7489 6.6.3): a verdict, never a hang.
 */
import type { DnsAnswer, DnsResolver } from '../dns/resolver.js';

/** What mailauth calls for every lookup (its `resolver` option). */
export type AuthResolver = (name: string, type: string) => Promise<unknown[]>;

/** The lookups of DnsResolver that verification uses. */
export type AuthDns = Pick<DnsResolver, 'txt' | 'mx' | 'a' | 'aaaa'>;

export interface AuthResolverLimits {
  /** Queries one message may cause in all (SPF, every DKIM key, DMARC, ARC). */
  maxLookups: number;
  /** Milliseconds since the epoch after which no lookup is made. */
  deadline: number;
  now?: () => number;
}

/** An error as node's resolver makes them: mailauth reads only `code`. */
function dnsError(code: string, message: string): Error {
  return Object.assign(new Error(`${message} (${code})`), { code });
}

/** node's code for each of our failure kinds; every other failure is a SERVFAIL to mailauth (temperror). */
function failureCode(error: string): string {
  if (error.startsWith('timeout')) return 'ETIMEOUT';
  if (error === 'REFUSED') return 'EREFUSED';
  return 'ESERVFAIL';
}

function unwrap<T>(answer: DnsAnswer<T>, name: string): T {
  switch (answer.status) {
    case 'ok':
      return answer.records;
    case 'nxdomain':
      throw dnsError('ENOTFOUND', `${name} does not exist`);
    case 'nodata':
      throw dnsError('ENODATA', `${name} has no records of the type`);
    case 'error':
      throw dnsError(failureCode(answer.error), `${name}: ${answer.error}`);
  }
}

/** One record type as mailauth expects it; TXT records as lists of strings (dns.resolveTxt's shape). */
async function lookup(dns: AuthDns, name: string, type: string): Promise<unknown[]> {
  switch (type) {
    case 'TXT':
      return unwrap(await dns.txt(name), name).map((record) => [record]);
    case 'MX':
      return unwrap(await dns.mx(name), name);
    case 'A':
      return unwrap(await dns.a(name), name);
    case 'AAAA':
      return unwrap(await dns.aaaa(name), name);
    case 'PTR':
      // Only SPF's "ptr" mechanism asks, which RFC 7208 5.5 says SHOULD NOT be published; our
      // resolver has no reverse lookups, so the mechanism matches nothing (as when its PTR
      // lookup fails, RFC 7208 5.5).
      return [];
    default:
      throw dnsError('ENOTIMP', `${type} lookups are not made for verification`);
  }
}

/** A mailauth resolver over `dns`, for one message: at most `maxLookups` queries, none after `deadline`. */
export function authResolver(dns: AuthDns, limits: AuthResolverLimits): AuthResolver {
  const now = limits.now ?? Date.now;
  let made = 0;
  return async (name, type) => {
    if (now() >= limits.deadline) throw dnsError('ETIMEOUT', `verification ran out of time before ${type} ${name}`);
    if (++made > limits.maxLookups) throw dnsError('ETIMEOUT', `verification made ${limits.maxLookups} lookups already, not ${type} ${name}`);
    return lookup(dns, name, type);
  };
}
