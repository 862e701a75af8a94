/**
 * What automatic shaping keeps of a triggered rule (delivery/shaping-gate.ts), and how it is
 * keyed and written in the coordination's expiring entries (coordination/port.ts): one entry
 * per (source, target) where the target is the site that answered, or `provider:<id>` for a
 * rule that names a provider (its change holds at every site of the provider).
 */
import type { ShapingAction } from '../domain/shaping-rules.js';

/** One triggered rule: a source suspended or held to a ceiling at a target until `until`. */
export interface Shaping {
  source: string;
  /** The site key, or `provider:<id>`. */
  target: string;
  /** The site whose reply triggered it. */
  site: string;
  rule: string;
  action: ShapingAction;
  /** When it began (epoch ms); a repeated match keeps it. */
  since: number;
  /** When it ends (epoch ms); a repeated match moves it on. */
  until: number;
}

export const PROVIDER_TARGET = 'provider:';

export function shapingKey(source: string, target: string): string {
  return `${source}\n${target}`;
}

/** The entry's value: the shaping without its key's parts and its expiry (the entry holds them). */
export function encodeShaping(s: Shaping): string {
  return JSON.stringify({ source: s.source, target: s.target, site: s.site, rule: s.rule, action: s.action, since: s.since });
}

/** The shaping of an entry, or undefined for a value this version does not read. */
export function decodeShaping(value: string, until: number): Shaping | undefined {
  try {
    const v = JSON.parse(value) as Partial<Shaping>;
    if (typeof v.source !== 'string' || typeof v.target !== 'string' || typeof v.rule !== 'string' || typeof v.since !== 'number') return undefined;
    if (v.action?.kind !== 'suspend' && v.action?.kind !== 'ceiling') return undefined;
    return { source: v.source, target: v.target, site: typeof v.site === 'string' ? v.site : v.target, rule: v.rule, action: v.action, since: v.since, until };
  } catch {
    return undefined;
  }
}

/** The targets a site's shapings may be kept under: the site itself, and its provider's. */
export function targetsOf(site: string, provider: string | undefined): string[] {
  return provider === undefined ? [site] : [site, PROVIDER_TARGET + provider];
}
