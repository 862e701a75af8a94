/**
 * Destinations, not domains: the MX site of a recipient domain is the sorted set of its MX host
 * names (KumoMTA's "site name"), so domains hosted together (every Google Workspace customer,
 * every Microsoft 365 tenant of one region) share one connection budget, and a domain with
 * several MX hosts is still one destination. A domain without MX records is its own site: its
 * own name is its only host (RFC 5321 5.1, implicit MX).
 *
 * Jobs are leased before their domain's MX records are looked up, so the dispatcher learns the
 * site of a domain from MX resolutions (delivery/mx.ts tells it) and counts a domain whose site
 * it has not learned yet under the domain's own name.
 */

/** The site of a set of MX host names: lowercase, without the root dot, sorted, joined by ",". */
export function siteName(hosts: readonly string[]): string {
  const names = new Set(hosts.map((h) => h.toLowerCase().replace(/\.$/, '')).filter((h) => h !== ''));
  return [...names].sort().join(',');
}

/** The MX host names of a site. */
export function siteHosts(site: string): string[] {
  return site.split(',');
}

/** Told the site of a domain after each successful MX lookup (SiteConcurrency is one). */
export interface SiteLearner {
  learn(domain: string, site: string): void;
}

/** Domains remembered at most: the oldest learned is forgotten first (it falls back to its own name). */
const MAX_DOMAINS = 100_000;

/**
 * Domain → site, as last resolved. An entry is kept past its DNS TTL on purpose: every attempt
 * resolves again (through the resolver's TTL cache) and refreshes it, and between attempts a
 * site that may be stale is a better key than the domain itself, which groups nothing.
 */
export class SiteDirectory {
  private readonly sites = new Map<string, string>();

  constructor(private readonly capacity = MAX_DOMAINS) {}

  /** The key a domain's attempts are counted under: its site, or the domain until the site is known. */
  keyOf(domain: string): string {
    return this.sites.get(domain) ?? domain;
  }

  /** True once an MX lookup of the domain told its site. */
  knows(domain: string): boolean {
    return this.sites.has(domain);
  }

  /** Records the site of a domain; returns the key it had before when this is news, else undefined. */
  learn(domain: string, site: string): string | undefined {
    const known = this.sites.get(domain);
    // Re-inserted so that the Map's order is the order of last use (oldest first out).
    this.sites.delete(domain);
    this.sites.set(domain, site);
    if (this.sites.size > this.capacity) this.sites.delete(this.sites.keys().next().value as string);
    return known === site ? undefined : (known ?? domain);
  }
}
