/**
 * Opens the configured store (LMDB in the data folder, or PostgreSQL in cluster mode) for one
 * CLI command and closes it afterwards. Only an
 * existing store is opened: `serve` creates the store, a CLI command never does, so a command
 * pointed at the wrong folder (no --config, a relative dataDir resolved against another working
 * folder) fails with one line naming the folder and where it came from, instead of answering
 * from a new, empty store it has just created.
 */
import { loadConfig } from '../config/load.js';
import type { Config } from '../config/schema.js';
import { storeEngineFor } from '../compose/store-engine.js';
import type { StorePort } from '../store/port/index.js';
import { StoreProblem } from '../store/port/problems.js';
import type { CommandIo } from './args.js';

export async function withStore<T>(io: CommandIo, configPath: string | undefined, fn: (store: StorePort, config: Config) => Promise<T>): Promise<T> {
  const config = loadConfig({ configPath, env: io.env });
  // Cluster mode: the commands work on the shared database (any node's CLI sees the same data).
  const { store, kind } = storeEngineFor(config, { mustExist: true, applicationName: 'postrider cli' });
  try {
    await store.start();
  } catch (err) {
    if (err instanceof StoreProblem && err.code === 'no_store') {
      const source = kind === 'lmdb' ? dataDirSource(io, configPath) : postgresSource(io, configPath);
      throw new StoreProblem('no_store', `${err.message}; ${source}`);
    }
    throw err;
  }
  try {
    return await fn(store, config);
  } finally {
    await store.stop();
  }
}

/** Where the data folder setting came from, and how to point the command at the daemon's. */
export function dataDirSource(io: CommandIo, configPath: string | undefined): string {
  const file = configPath ?? io.env.POSTRIDER_CONFIG;
  const from = io.env.POSTRIDER_DATA_DIR
    ? 'the folder comes from POSTRIDER_DATA_DIR'
    : file
      ? `the folder is dataDir of ${file} (default ./data), a relative one taken from the current folder`
      : 'no --config was given, so the folder is the default ./data in the current folder';
  return `${from}. Point the command at the daemon's configuration with --config PATH (postrider init writes one) or set POSTRIDER_DATA_DIR`;
}

/** Cluster mode: where the database URL and the schema came from, and how to point the command at the daemon's. */
export function postgresSource(io: CommandIo, configPath: string | undefined): string {
  const file = configPath ?? io.env.POSTRIDER_CONFIG;
  const url = io.env.POSTRIDER_STORE_POSTGRES_URL ? 'the URL comes from POSTRIDER_STORE_POSTGRES_URL' : `the URL is store.postgresUrl of ${file ?? 'the configuration'}`;
  const schema = io.env.POSTRIDER_STORE_POSTGRES_SCHEMA
    ? 'the schema from POSTRIDER_STORE_POSTGRES_SCHEMA'
    : file
      ? `the schema is store.postgresSchema of ${file} (default postrider)`
      : 'the schema is the default postrider';
  return `${url}, ${schema}. Point the command at the daemon's configuration with --config PATH, or set POSTRIDER_STORE_POSTGRES_URL and POSTRIDER_STORE_POSTGRES_SCHEMA as the daemon has them`;
}
