/**
 * Where to deliver mail for a recipient domain (RFC 5321 5.1 "Locating the Target Host"):
 *  - MX records, lowest preference first; equal preferences in random order (5.1: "the SMTP
 *    client SHOULD pick one at random" to spread load);
 *  - no MX records (NODATA): the domain itself is the only host, priority 0 ("implicit MX");
 *  - the null MX "0 ." (RFC 7505): the domain accepts no mail, a permanent failure (556 5.1.10);
 *  - NXDOMAIN: the domain does not exist, a permanent failure (5.1.2);
 *  - SERVFAIL, timeouts: temporary (4.4.3), the message is deferred (4.5.4.1);
 *  - each host's A and AAAA records, filtered by AddressPolicy (no loopback/private targets).
 * Caching and TTLs are the DnsResolver's business. Each MX answer also names the domain's site
 * (sites.ts: the sorted set of its MX host names, the domain itself for an implicit MX), which
 * is told to the optional SiteLearner so that delivery counts concurrency per destination.
 */
import type { DnsAnswer, DnsResolver, MxRecord } from '../dns/resolver.js';
import { isNullMx } from '../dns/resolver.js';
import type { ParsedReply } from '../domain/smtp-reply.js';
import type { AddressPolicy } from './address-policy.js';
import { siteName, type SiteLearner } from './sites.js';

/** The lookups this module needs (DnsResolver has them). */
export type MxLookups = Pick<DnsResolver, 'mx' | 'a' | 'aaaa'>;

export interface MxHost {
  host: string;
  priority: number;
  /** Addresses we may connect to, IPv4 first (IPv6 reputation at big receivers is stricter). */
  addresses: string[];
}

export type MxResolution =
  | { status: 'ok'; hosts: MxHost[]; implicit: boolean; refused: string[] }
  | { status: 'failed'; reply: ParsedReply };

/** A resolution with the domain's MX site beside it (set once the MX answer named one; always when ok). */
export interface MxLocation {
  resolution: MxResolution;
  site?: string;
}

/** More MX hosts than this are ignored (real domains publish 1 to 5). */
export const MAX_MX_HOSTS = 10;

type HostLookup = { host: string; addresses: string[]; refused: string[]; temporary?: string; missing: boolean };

export class MxResolver {
  constructor(
    private readonly dns: MxLookups,
    private readonly policy: AddressPolicy,
    private readonly random: () => number = Math.random,
    private readonly sites?: SiteLearner,
  ) {}

  async resolve(domain: string): Promise<MxResolution> {
    return (await this.locate(domain)).resolution;
  }

  /** resolve() plus the site told to the learner, so that callers never compute it again from fewer hosts. */
  async locate(domain: string): Promise<MxLocation> {
    const answer = await this.dns.mx(domain);
    switch (answer.status) {
      case 'nxdomain':
        return { resolution: failed(undefined, '5.1.2', `Host or domain name not found: ${domain} does not exist (NXDOMAIN)`) };
      case 'error':
        return { resolution: failed(undefined, '4.4.3', `Name service error for name=${domain} type=MX: ${answer.error}`) };
      case 'nodata': {
        const site = this.learn(domain, [domain]);
        return { site, resolution: await this.implicitMx(domain) };
      }
      case 'ok': {
        if (isNullMx(answer.records)) return { resolution: failed(556, '5.1.10', `Recipient address has null MX: ${domain} accepts no mail (RFC 7505)`) };
        // Learned from the MX names alone: the site is where the domain's mail goes, whether or
        // not its hosts' addresses resolve this time.
        const site = this.learn(domain, answer.records.map((r) => r.exchange));
        return { site, resolution: await this.explicitMx(domain, answer.records) };
      }
    }
  }

  private learn(domain: string, mxHosts: readonly string[]): string {
    const site = siteName(mxHosts);
    this.sites?.learn(domain, site);
    return site;
  }

  /** RFC 5321 5.1: without MX records the domain's own address records are the target. */
  private async implicitMx(domain: string): Promise<MxResolution> {
    const found = await this.lookupHost(domain);
    if (found.temporary) return failed(undefined, '4.4.3', `Name service error for name=${domain} type=A/AAAA: ${found.temporary}`);
    if (found.missing) return failed(undefined, '5.1.2', `Host or domain name not found: ${domain} has no MX and no address records`);
    if (found.addresses.length === 0) return refusedOnly(domain, found.refused);
    return { status: 'ok', implicit: true, refused: found.refused, hosts: [{ host: domain, priority: 0, addresses: found.addresses }] };
  }

  private async explicitMx(domain: string, records: MxRecord[]): Promise<MxResolution> {
    const ordered = this.order(records.filter((r) => r.exchange !== '')).slice(0, MAX_MX_HOSTS);
    const lookups = await Promise.all(ordered.map((r) => this.lookupHost(r.exchange)));
    const seen = new Set<string>();
    const hosts: MxHost[] = [];
    lookups.forEach((l, i) => {
      const addresses = l.addresses.filter((a) => !seen.has(a));
      addresses.forEach((a) => seen.add(a));
      if (addresses.length > 0) hosts.push({ host: l.host, priority: ordered[i].priority, addresses });
    });
    const refused = lookups.flatMap((l) => l.refused);
    if (hosts.length > 0) return { status: 'ok', implicit: false, refused, hosts };
    const temporary = lookups.find((l) => l.temporary);
    if (temporary) return failed(undefined, '4.4.3', `Name service error for MX host ${temporary.host}: ${temporary.temporary}`);
    if (refused.length > 0) return refusedOnly(domain, refused);
    return failed(undefined, '5.4.4', `MX hosts of ${domain} have no address records: ${ordered.map((r) => r.exchange).join(', ')}`);
  }

  /** Lowest preference first; a random order among equal preferences (RFC 5321 5.1). */
  private order(records: MxRecord[]): MxRecord[] {
    const keyed = records.map((r) => ({ r, k: this.random() }));
    keyed.sort((x, y) => x.r.priority - y.r.priority || x.k - y.k);
    return keyed.map((x) => x.r);
  }

  private async lookupHost(host: string): Promise<HostLookup> {
    const [a, aaaa] = await Promise.all([this.dns.a(host), this.dns.aaaa(host)]);
    const all = [...records(a), ...records(aaaa)];
    const errors = [a, aaaa].filter((x): x is { status: 'error'; error: string } => x.status === 'error');
    return {
      host,
      addresses: all.filter((ip) => this.policy.allows(ip)),
      refused: all.filter((ip) => !this.policy.allows(ip)),
      // Only a problem when nothing usable came back: one family failing is not fatal.
      temporary: all.length === 0 && errors.length > 0 ? errors[0].error : undefined,
      missing: all.length === 0 && errors.length === 0,
    };
  }
}

function records(answer: DnsAnswer<string[]>): string[] {
  return answer.status === 'ok' ? answer.records : [];
}

function failed(code: number | undefined, enhancedCode: string, text: string): MxResolution {
  return { status: 'failed', reply: { code, enhancedCode, text } };
}

/** Every address is loopback/private/reserved: never connect (SSRF), give up (5.4.4, RFC 3463). */
function refusedOnly(domain: string, refused: string[]): MxResolution {
  return failed(undefined, '5.4.4', `MX of ${domain} resolves only to refused (loopback, private or reserved) addresses: ${refused.join(', ')}`);
}
