/**
 * The MTA-STS policy cache (mta-sts/cache.ts keeps the rules): the last policy fetched for a
 * recipient domain, kept across restarts because RFC 8461 5.1 lets a cached policy stand in
 * for a missing TXT record until it expires; a cache lost at every restart would let whoever
 * can suppress that record during a restart turn enforcement off.
 */
import type { StsPolicy } from '../../mta-sts/policy.js';
import { dbsOf } from './databases.js';
import type { Store } from './env.js';

export interface CachedStsPolicy {
  /** The id of the TXT record the policy was fetched for (RFC 8461 3.1). */
  id: string;
  policy: StsPolicy;
  fetchedAtMs: number;
  /** fetchedAtMs + max_age: after it the policy no longer applies (RFC 8461 3.2). */
  expiresAtMs: number;
}

/** The cached policy of the recipient domain (lower case), expired or not. */
export function cachedStsPolicy(store: Store, domain: string): CachedStsPolicy | undefined {
  return dbsOf(store).mtaStsPolicies.get(domain) as CachedStsPolicy | undefined;
}

/** Stores a freshly fetched policy in place of the domain's previous one. */
export async function saveStsPolicy(store: Store, domain: string, entry: CachedStsPolicy): Promise<void> {
  await store.write(() => dbsOf(store).mtaStsPolicies.put(domain, entry));
}
