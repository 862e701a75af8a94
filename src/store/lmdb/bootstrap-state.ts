/**
 * The first-start marks in `meta` (bootstrap.ts): when the folder was bootstrapped, and whether
 * the initial API key still waits to be printed.
 */
import { dbsOf } from './databases.js';
import type { Store } from './env.js';

export function isBootstrapped(store: Store): boolean {
  return dbsOf(store).meta.get('bootstrappedAt') !== undefined;
}

/** Bootstrapped now; the initial key counts as pending until clearInitialKeyPending. */
export async function markBootstrapped(store: Store, at: Date): Promise<void> {
  await store.write(() => {
    dbsOf(store).meta.put('bootstrappedAt', at.toISOString());
    // Cleared once the key was printed; a folder bootstrapped before this flag existed has none.
    dbsOf(store).meta.put('initialKeyPending', true);
  });
}

export function isInitialKeyPending(store: Store): boolean {
  return dbsOf(store).meta.get('initialKeyPending') === true;
}

export async function clearInitialKeyPending(store: Store): Promise<void> {
  await store.write(() => dbsOf(store).meta.remove('initialKeyPending'));
}
