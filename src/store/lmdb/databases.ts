/**
 * The databases of an open store, for the verbs of src/store/ only. Store keeps them private so
 * that everything else, tests included, goes through the verbs: the key layouts (layout.ts) and
 * the indexes kept beside each record stay this folder's business. TypeScript has no
 * folder-private members, so this accessor uses the element access TypeScript allows on private
 * members, and the structure check keeps it in the folder: no module outside src/store/ may
 * import this file (.dependency-cruiser.cjs, rule store-databases-private).
 */
import type { Dbs, Store } from './env.js';
import type { ReadCaches } from './read-caches.js';

export function dbsOf(store: Store): Dbs {
  return store['databases']();
}

/** The store's caches of decoded records (read-caches.ts), reached the same way. */
export function cachesOf(store: Store): ReadCaches {
  return store['readCaches']();
}
