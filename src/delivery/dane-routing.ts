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
import type { MxHost } from './mx.js';

/** What delivery needs of DaneLookup (src/dane/lookup.ts). */
export interface DaneSource {
  tlsaFor(mxHost: string): Promise<DaneResult>;
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
