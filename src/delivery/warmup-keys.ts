/**
 * The counters a warming source's messages are counted in (delivery/warmup-gate.ts): one set per
 * source (coordination counters named "warmup:<source>"), keyed by window and site key, e.g.
 * "d:2026-12-05:google" and "h:2026-12-05T14:google". The window is part of the key, so a new
 * day or hour starts from 0 by itself; the key's ttl (its window's end) lets the rows go.
 */
import { OTHER_SITES } from '../domain/warmup-curves.js';
import type { SiteProviders } from './site-provider.js';

/** Where a site's messages are counted, and by which curve. */
export interface SiteKey {
  /** The provider id, or the site itself when it is not in the provider table. */
  key: string;
  /** The provider id, or OTHER_SITES. */
  curve: string;
}

export function counterName(source: string): string {
  return `warmup:${source}`;
}

export function siteKeyOf(providers: SiteProviders, site: string): SiteKey {
  const provider = providers.providerOf(site);
  return provider === undefined ? { key: site, curve: OTHER_SITES } : { key: provider, curve: provider };
}

/** The counter keys of `key` in the UTC day and hour that hold `now`. */
export function windowKeys(key: string, now: number): { day: string; hour: string } {
  const iso = new Date(now).toISOString();
  return { day: `d:${iso.slice(0, 10)}:${key}`, hour: `h:${iso.slice(0, 13)}:${key}` };
}

/** The site key of a counter key of the day or hour holding `now`, undefined for another window's. */
export function keyOfWindow(counterKey: string, now: number, window: 'day' | 'hour'): string | undefined {
  const iso = new Date(now).toISOString();
  const prefix = window === 'day' ? `d:${iso.slice(0, 10)}:` : `h:${iso.slice(0, 13)}:`;
  return counterKey.startsWith(prefix) ? counterKey.slice(prefix.length) : undefined;
}
