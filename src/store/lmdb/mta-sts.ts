/**
 * The MTA-STS policy cache (mta-sts/cache.ts keeps the rules): the last policy fetched for a
 * recipient domain, kept across restarts because RFC 8461 5.1 lets a cached policy stand in
 * for a missing TXT record until it expires; a cache lost at every restart would let whoever
 * can suppress that record during a restart turn enforcement off.
 */
import type { CachedStsPolicy } from '../port/delivery-state.js';
import { dbsOf } from './databases.js';
import type { Store } from './env.js';

export type { CachedStsPolicy } from '../port/delivery-state.js';

/** The cached policy of the recipient domain (lower case), expired or not. */
export function cachedStsPolicy(store: Store, domain: string): CachedStsPolicy | undefined {
  return dbsOf(store).mtaStsPolicies.get(domain) as CachedStsPolicy | undefined;
}

/** Stores a freshly fetched policy in place of the domain's previous one. */
export async function saveStsPolicy(store: Store, domain: string, entry: CachedStsPolicy): Promise<void> {
  await store.write(() => dbsOf(store).mtaStsPolicies.put(domain, entry));
}
