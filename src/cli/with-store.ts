/** Opens the configured data folder's store for one CLI command and closes it afterwards. */
import { loadConfig } from '../config/load.js';
import type { Config } from '../config/schema.js';
import { Store } from '../store/env.js';
import type { CommandIo } from './args.js';

export async function withStore<T>(io: CommandIo, configPath: string | undefined, fn: (store: Store, config: Config) => Promise<T>): Promise<T> {
  const config = loadConfig({ configPath, env: io.env });
  const store = new Store({ dataDir: config.dataDir });
  await store.start();
  try {
    return await fn(store, config);
  } finally {
    await store.stop();
  }
}
