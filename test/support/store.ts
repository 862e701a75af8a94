/**
 * The one place a test opens a store engine: every test but the engine's own
 * (test/**\/*.lmdb.test.ts) and the contract harness (test/store-contract/engines.ts) gets its
 * store here, as a StorePort, and sees nothing of the engine behind it. What a test needs that
 * the port cannot do (seed the event log, inspect an index) is in support/engine-fixtures.ts.
 *
 * The engine is LMDB, unless POSTRIDER_TEST_STORE_ENGINE=postgres (`npm run test:pg`, which
 * runs the integration suite again on its throw-away PostgreSQL): then every test store and
 * test daemon keeps its data in a schema of that cluster named after its data folder, so that a
 * daemon, its restart and a store opened on the same folder see the same data.
 */
import { createHash } from 'node:crypto';
import { LmdbStore } from '../../src/store/lmdb/engine.js';
import { PostgresStore } from '../../src/store/postgres/engine.js';
import type { StorePort } from '../../src/store/port/index.js';

/** The engine the tests' stores are: the single switch point. */
export const TEST_STORE_ENGINE: 'lmdb' | 'postgres' = process.env.POSTRIDER_TEST_STORE_ENGINE === 'postgres' ? 'postgres' : 'lmdb';

function testPgUrl(): string {
  const url = process.env.POSTRIDER_TEST_PG_URL;
  if (!url) throw new Error('POSTRIDER_TEST_STORE_ENGINE=postgres needs POSTRIDER_TEST_PG_URL: run it with npm run test:pg');
  return url;
}

/** The schema of the data folder's store on the test PostgreSQL (one per folder). */
export function testSchemaOf(dataDir: string): string {
  return `t_${createHash('sha256').update(dataDir).digest('hex').slice(0, 24)}`;
}

/**
 * The POSTRIDER_* variables that put a daemon on `dataDir` on the test engine (none for LMDB):
 * for spawned daemons (support/child-daemon.ts).
 */
export function testStoreEnv(dataDir: string): Record<string, string> {
  if (TEST_STORE_ENGINE === 'lmdb') return {};
  return { POSTRIDER_STORE_POSTGRES_URL: testPgUrl(), POSTRIDER_STORE_POSTGRES_SCHEMA: testSchemaOf(dataDir), POSTRIDER_STORE_POOL_SIZE: '4' };
}

/** The same as config overrides, for in-process daemons (support/daemon.ts). */
export function testStoreOverrides(dataDir: string): Record<string, unknown> {
  if (TEST_STORE_ENGINE === 'lmdb') return {};
  return { 'store.postgresUrl': testPgUrl(), 'store.postgresSchema': testSchemaOf(dataDir), 'store.poolSize': 4 };
}

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
    case 'postgres':
      return new PostgresStore({ url: testPgUrl(), schema: testSchemaOf(dataDir), poolSize: 4, mustExist: o.mustExist });
  }
}
