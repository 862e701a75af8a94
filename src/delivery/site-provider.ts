/**
 * Which provider of the provider table (domain/site-limits.ts) an MX site belongs to: the one with
 * an MX host suffix that one of the site's hosts ends in, on a label boundary, the longest such
 * suffix winning (as site-limits.ts matches them). Every Gmail and Google Workspace site is then
 * "google", every Microsoft 365 tenant "microsoft": what a provider counts against a sending IP
 * is its mail from that IP to all of them together, so the warm-up counts it so too.
 */
import { PROVIDER_LIMITS, type ProviderLimits } from '../domain/site-limits.js';
import { siteHosts } from './sites.js';

/** Sites remembered at most (asked for every attempt of a warming source). */
const MEMO_SIZE = 10_000;

export class SiteProviders {
  private readonly suffixes: { suffix: string; id: string }[];
  private readonly memo = new Map<string, string | null>();

  constructor(providers: readonly ProviderLimits[] = PROVIDER_LIMITS) {
    this.suffixes = providers.flatMap((p) => p.suffixes.map((suffix) => ({ suffix: suffix.toLowerCase(), id: p.id })));
  }

  /** The provider id of a site (or of a domain whose site is not known yet), undefined outside the table. */
  providerOf(site: string): string | undefined {
    const known = this.memo.get(site);
    if (known !== undefined) return known ?? undefined;
    const hosts = siteHosts(site.toLowerCase());
    let best: { suffix: string; id: string } | undefined;
    for (const e of this.suffixes) {
      if (best && best.suffix.length >= e.suffix.length) continue;
      if (hosts.some((h) => h === e.suffix || h.endsWith(`.${e.suffix}`))) best = e;
    }
    if (this.memo.size >= MEMO_SIZE) this.memo.clear();
    this.memo.set(site, best?.id ?? null);
    return best?.id;
  }
}
