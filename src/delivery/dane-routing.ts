/**
 * DANE (RFC 7672; src/dane/) applied to an attempt's MX hosts before connecting: one TLSA
 * lookup per host (cached by TTL in the lookup), and what it means for that host
 * (tlsRequirement):
 *  - `skip-mx` (the lookup failed in a zone that may be signed): the host is not used; when no
 *    host is left the message is deferred (4.7.5), never delivered without TLSA (RFC 7672 2.2);
 *  - `encrypt`/`authenticate`: the host's targets carry the result, and smtp-client.ts connects
 *    to them at TLS level `dane` (mandatory TLS, TLSA match after the handshake);
 *  - `opportunistic` (DANE off, unsigned, no TLSA): as without DANE.
 */
import { tlsRequirement, type DaneResult } from '../dane/index.js';
import type { ParsedReply } from '../domain/smtp-reply.js';
import { normalizeName } from '../dns/resolver.js';
import type { MxHost } from './mx.js';

/** What delivery needs of DaneLookup (src/dane/lookup.ts). */
export interface DaneSource {
  tlsaFor(mxHost: string): Promise<DaneResult>;
  /** The MX host names of a domain from its DNSSEC-validated MX RRset; none when it is not validated. */
  secureMxHosts(domain: string): Promise<string[]>;
}

export interface DaneHost extends MxHost {
  /** Set when the host's TLSA records make TLS mandatory. */
  dane?: DaneResult;
}

/** A host dropped because its TLSA lookup failed, and why (told to TLS-RPT as dnssec-invalid). */
export interface SkippedHost {
  host: string;
  reason: string;
}

export type DaneRouting = { ok: true; hosts: DaneHost[]; skipped: SkippedHost[] } | { ok: false; reply: ParsedReply; skipped: SkippedHost[] };

export async function routeUnderDane(domain: string, hosts: MxHost[], lookup: DaneSource): Promise<DaneRouting> {
  const results = await Promise.all(hosts.map((h) => lookup.tlsaFor(h.host)));
  const kept: DaneHost[] = [];
  const skipped: SkippedHost[] = [];
  hosts.forEach((h, i) => {
    const result = results[i];
    const requirement = tlsRequirement(result);
    if (requirement === 'skip-mx') skipped.push({ host: h.host, reason: 'reason' in result ? result.reason : result.kind });
    else kept.push(requirement === 'opportunistic' ? h : { ...h, dane: result });
  });
  if (kept.length > 0) return { ok: true, hosts: kept, skipped };
  const why = skipped.map((k) => `${k.host}: ${k.reason}`).join('; ');
  return { ok: false, reply: { enhancedCode: '4.7.5', text: `No usable MX host of ${domain}: TLSA lookup failed (RFC 7672 2.2, not delivered without it): ${why}` }, skipped };
}

/**
 * The hosts under DANE that a DNSSEC-validated MX RRset of `domain` names: those whose TLSA
 * records may stand in for an MTA-STS policy that does not name them (sts-routing.ts). Without a
 * validated MX RRset a forged MX answer could name any host of any signed zone, TLSA records and
 * all, and the policy's mx list is then what authenticates the name (RFC 8461 4.1). Asked only
 * when some host under DANE is one `named` refuses.
 */
export async function daneVouched(domain: string, hosts: DaneHost[], lookup: DaneSource, named: (host: string) => boolean): Promise<ReadonlySet<string>> {
  if (!hosts.some((h) => h.dane && !named(h.host))) return new Set();
  const secure = new Set(await lookup.secureMxHosts(domain));
  return new Set(hosts.filter((h) => h.dane && secure.has(normalizeName(h.host))).map((h) => h.host));
}
