/**
 * The MX addresses a source can reach: a socket bound to an IPv4 address connects only to IPv4
 * addresses, one bound to an IPv6 address only to IPv6 ones (the kernel answers EINVAL to the
 * other family before a packet leaves). Trying them anyway spends the attempt's MAX_TARGETS on
 * addresses that cannot answer, ends in a "bind EINVAL" deferral where the MX host has none of
 * the source's family, and counts as connections that opened nothing against the source (the
 * health gate, source-health.ts), although no receiver was asked. The kernel's choice (no
 * source address) reaches both.
 */
import net from 'node:net';
import type { ParsedReply } from '../domain/smtp-reply.js';
import type { Target } from './smtp-results.js';

/** The targets of the source address's family, in order; all of them without a source address. */
export function reachableTargets<T extends Target>(targets: readonly T[], sourceAddress: string | undefined): readonly T[] {
  if (sourceAddress === undefined) return targets;
  const family = net.isIP(sourceAddress);
  return targets.filter((t) => net.isIP(t.address) === family);
}

/** The deferral of an attempt whose source can reach none of the MX addresses (RFC 3463 X.4.4: unable to route). */
export function unreachableFamily(domain: string, source: { name: string; address: string }): ParsedReply {
  const family = net.isIP(source.address) === 6 ? 'IPv6' : 'IPv4';
  return { enhancedCode: '4.4.4', text: `MX hosts of ${domain} have no ${family} address, the only kind source "${source.name}" (${source.address}) can connect to` };
}
