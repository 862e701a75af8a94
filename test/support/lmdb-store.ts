/**
 * The LMDB engine itself, for its own tests (test/**\/*.lmdb.test.ts): a started LmdbStore over
 * a folder, with the engine's internals (its write, its databases) in reach. Every other test
 * opens its store through support/store.ts and sees the port only.
 */
import { LmdbStore } from '../../src/store/lmdb/engine.js';

/** A started LmdbStore over `dataDir`; close it with stop(). */
export async function openLmdbStore(dataDir: string): Promise<LmdbStore> {
  const store = new LmdbStore({ dataDir });
  await store.start();
  return store;
}
