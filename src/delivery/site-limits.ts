/**
 * The limits of an MX site: the operator's `delivery.sites` overrides first, then the provider
 * table (domain/site-limits.ts), then `delivery.perDomainConcurrency`. Each is matched by MX host
 * name suffix on a label boundary ("google.com" matches "aspmx.l.google.com", never
 * "notgoogle.com"); among several matches the longest suffix wins. An override that leaves a
 * field out keeps the table's value for it.
 */
import { PROVIDER_LIMITS, type ProviderLimits, type SiteLimits } from '../domain/site-limits.js';
import { siteHosts } from './sites.js';

export type { SiteLimits } from '../domain/site-limits.js';

/** `delivery.sites`: MX host suffix → limits (as the config file has them). */
export type SiteOverrides = Readonly<Record<string, Readonly<Partial<SiteLimits>>>>;

/** What the dispatcher and the connection cache ask: the limits of one site. */
export type SiteLimitsFn = (site: string) => SiteLimits;

interface Entry {
  suffix: string;
  limits: Partial<SiteLimits>;
}

/** Sites whose limits are remembered at most (the lookup runs for every due job the dispatcher scans). */
const MEMO_SIZE = 10_000;

export class SiteLimitTable {
  private readonly overrides: Entry[];
  private readonly providers: Entry[];
  private readonly memo = new Map<string, SiteLimits>();

  constructor(
    private readonly defaultConcurrency: number,
    overrides: SiteOverrides = {},
    providers: readonly ProviderLimits[] = PROVIDER_LIMITS,
  ) {
    this.overrides = Object.entries(overrides).map(([suffix, limits]) => ({ suffix: normalizeSuffix(suffix), limits }));
    this.providers = providers.flatMap((p) => p.suffixes.map((suffix) => ({ suffix: normalizeSuffix(suffix), limits: p })));
  }

  /** The limits of a site (or of a domain whose site is not known yet: its name is its only host). */
  readonly siteLimits: SiteLimitsFn = (site) => {
    const known = this.memo.get(site);
    if (known) return known;
    const hosts = siteHosts(site);
    const override = longestMatch(this.overrides, hosts)?.limits;
    const provider = longestMatch(this.providers, hosts)?.limits;
    const limits: SiteLimits = { concurrency: override?.concurrency ?? provider?.concurrency ?? this.defaultConcurrency };
    const perConnection = override?.maxMessagesPerConnection ?? provider?.maxMessagesPerConnection;
    if (perConnection !== undefined) limits.maxMessagesPerConnection = perConnection;
    if (this.memo.size >= MEMO_SIZE) this.memo.clear();
    this.memo.set(site, limits);
    return limits;
  };
}

/** "*.Google.com", ".google.com" and "google.com." all mean "google.com". */
export function normalizeSuffix(suffix: string): string {
  return suffix
    .toLowerCase()
    .replace(/^\*?\./, '')
    .replace(/\.$/, '');
}

/** The entry with the longest suffix that one of the hosts is, or ends in on a label boundary. */
export function longestMatch<E extends { suffix: string }>(entries: readonly E[], hosts: readonly string[]): E | undefined {
  let best: E | undefined;
  for (const e of entries) {
    if (best && best.suffix.length >= e.suffix.length) continue;
    if (hosts.some((h) => h === e.suffix || h.endsWith(`.${e.suffix}`))) best = e;
  }
  return best;
}
