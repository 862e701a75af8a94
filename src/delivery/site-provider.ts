/**
 * Which provider of the provider table (domain/site-limits.ts) an MX site belongs to: the one with
 * an MX host suffix that one of the site's hosts ends in, on a label boundary, the longest such
 * suffix winning (as site-limits.ts matches them). Every Gmail and Google Workspace site is then
 * "google", every Microsoft 365 tenant "microsoft": what a provider counts against a sending IP
 * is its mail from that IP to all of them together, so the warm-up counts it so too.
 */
import { PROVIDER_LIMITS, type ProviderLimits } from '../domain/site-limits.js';
import { longestMatch, normalizeSuffix } from './site-limits.js';
import { siteHosts } from './sites.js';

/** Sites remembered at most (asked for every attempt of a warming source, and by shaping). */
const MEMO_SIZE = 10_000;

export class SiteProviders {
  private readonly suffixes: { suffix: string; id: string }[];
  private readonly memo = new Map<string, string | null>();

  constructor(providers: readonly ProviderLimits[] = PROVIDER_LIMITS) {
    this.suffixes = providers.flatMap((p) => p.suffixes.map((suffix) => ({ suffix: normalizeSuffix(suffix), id: p.id })));
  }

  /**
   * The provider id of a site (or of a domain whose site is not known yet), undefined outside
   * the table; `mx`: also the MX host an attempt used (a reply names its host, not the site).
   */
  providerOf(site: string, mx?: string): string | undefined {
    const key = mx === undefined ? site : `${site}\n${mx}`;
    const known = this.memo.get(key);
    if (known !== undefined) return known ?? undefined;
    const hosts = siteHosts(site.toLowerCase());
    if (mx !== undefined) hosts.push(mx.toLowerCase());
    const id = longestMatch(this.suffixes, hosts)?.id;
    if (this.memo.size >= MEMO_SIZE) this.memo.clear();
    this.memo.set(key, id ?? null);
    return id;
  }
}
