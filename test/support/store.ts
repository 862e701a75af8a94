/**
 * The one place a test opens a store engine: every test but the engine's own
 * (test/**\/*.lmdb.test.ts) and the contract harness (test/store-contract/engines.ts) gets its
 * store here, as a StorePort, and sees nothing of the engine behind it. What a test needs that
 * the port cannot do (seed the event log, inspect an index) is in support/engine-fixtures.ts.
 *
 * The engine is LMDB, the only one. When cluster mode adds PostgreSQL, TEST_STORE_ENGINE becomes
 * a setting read once here (an environment variable) and openStore gains that engine's case:
 * nothing else in the tests changes.
 */
import { LmdbStore } from '../../src/store/lmdb/engine.js';
import type { StorePort } from '../../src/store/port/index.js';

/** The engine the tests' stores are: the single switch point. */
export const TEST_STORE_ENGINE = 'lmdb' as const;

export interface OpenStoreOptions {
  /** Read-only, for inspecting a folder another process may still have open. */
  readOnly?: boolean;
  /** Refuse (StoreProblem no_store) instead of creating a store where there is none. */
  mustExist?: boolean;
}

/** A started store over `dataDir` (a fresh folder, or a stopped daemon's); close it with stop(). */
export async function openStore(dataDir: string, o: OpenStoreOptions = {}): Promise<StorePort> {
  const store = newStore(dataDir, o);
  await store.start();
  return store;
}

function newStore(dataDir: string, o: OpenStoreOptions): StorePort {
  switch (TEST_STORE_ENGINE) {
    case 'lmdb':
      return new LmdbStore({ dataDir, readOnly: o.readOnly, mustExist: o.mustExist });
  }
}
