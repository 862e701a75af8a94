/**
 * The first-start marks in `meta` (bootstrap.ts): when the folder was bootstrapped, and whether
 * the initial API key still waits to be printed.
 */
import type { Store } from './env.js';

export function isBootstrapped(store: Store): boolean {
  return store.db.meta.get('bootstrappedAt') !== undefined;
}

/** Bootstrapped now; the initial key counts as pending until clearInitialKeyPending. */
export async function markBootstrapped(store: Store, at: Date): Promise<void> {
  await store.write(() => {
    store.db.meta.put('bootstrappedAt', at.toISOString());
    // Cleared once the key was printed; a folder bootstrapped before this flag existed has none.
    store.db.meta.put('initialKeyPending', true);
  });
}

export function isInitialKeyPending(store: Store): boolean {
  return store.db.meta.get('initialKeyPending') === true;
}

export async function clearInitialKeyPending(store: Store): Promise<void> {
  await store.write(() => store.db.meta.remove('initialKeyPending'));
}
