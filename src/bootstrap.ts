/**
 * First start on an empty data folder: create an account and an account-level API key, so a
 * new operator can call the API at once. The key is printed once by main.ts and written to
 * data/initial-api-key with mode 0600 (readable by the service user only).
 *
 * "Empty" is decided on the store that Store.start accepted, and Store.start never accepts a
 * new, empty store in a folder that has held one (store/marker.ts): a lost data.mdb stops the
 * daemon instead of reaching this. A store that was created but never bootstrapped (a crash in
 * between) is bootstrapped at the next start.
 *
 * The key counts as shown only once `postrider serve` has printed it after a successful start
 * (markInitialKeyShown). A first start that fails after the account was created (a port in
 * use) prints it at the next start that succeeds, read back from initial-api-key, so it is
 * never lost between two attempts.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { StorePort } from './store/port/index.js';

export interface InitialCredentials {
  accountId: string;
  apiKey: string;
  file: string;
}

export async function bootstrapIfEmpty(store: StorePort, dataDir: string): Promise<InitialCredentials | null> {
  if ((await store.meta.isBootstrapped()) || (await store.accounts.list()).length > 0) return unshownCredentials(store, dataDir);
  const account = await store.accounts.create({ name: 'default', state: 'active' });
  const { token } = await store.apiKeys.create({ accountId: account.id, channelId: null, name: 'initial' });
  const file = path.join(dataDir, 'initial-api-key');
  fs.writeFileSync(file, token + '\n', { mode: 0o600 });
  fs.chmodSync(file, 0o600);
  await store.meta.markBootstrapped(new Date());
  return { accountId: account.id, apiKey: token, file };
}

/** The initial key of an earlier start that never got as far as printing it, if any. */
async function unshownCredentials(store: StorePort, dataDir: string): Promise<InitialCredentials | null> {
  if (!(await store.meta.isInitialKeyPending())) return null;
  const file = path.join(dataDir, 'initial-api-key');
  let apiKey: string;
  try {
    apiKey = fs.readFileSync(file, 'utf8').trim();
  } catch {
    return null; // removed by the operator: nothing to show
  }
  const account = (await store.accounts.list())[0];
  return account && apiKey ? { accountId: account.id, apiKey, file } : null;
}

/** `postrider serve` printed the initial key after a successful start: never print it again. */
export async function markInitialKeyShown(store: StorePort): Promise<void> {
  await store.meta.clearInitialKeyPending();
}
