/** Store verbs for accounts. */
import { randomUUID } from 'node:crypto';
import type { Account, AccountState } from '../../domain/types.js';
import { deepFreeze } from '../../domain/deep-freeze.js';
import { revalidated } from './bytes.js';
import { cachesOf, dbsOf } from './databases.js';
import type { Store } from './env.js';

export async function createAccount(store: Store, input: { name: string; state: AccountState }): Promise<Account> {
  const now = new Date().toISOString();
  const account: Account = { id: randomUUID(), name: input.name, state: input.state, createdAt: now, updatedAt: now };
  await store.write(() => dbsOf(store).accounts.put(account.id, account));
  return account;
}

/**
 * Frozen and kept with the bytes it was decoded from, as getDomain (domains.ts): every send
 * reads its account (sending policy), and decoding it each time was a sixtieth of the SMTP
 * intake's main thread (bench smtp --profile, issue 36). Compared at every call, so a state
 * change is seen by the very next read.
 */
export function getAccount(store: Store, id: string): Account | undefined {
  const db = dbsOf(store).accounts;
  return revalidated(db, cachesOf(store).accounts, id, () => deepFreeze(db.get(id) as Account));
}

export function listAccounts(store: Store): Account[] {
  return [...dbsOf(store).accounts.getRange({})].map((e) => e.value as Account);
}

export async function setAccountState(store: Store, id: string, state: AccountState): Promise<Account | undefined> {
  return store.write(() => {
    const current = getAccount(store, id);
    if (!current) return undefined;
    const next: Account = { ...current, state, updatedAt: new Date().toISOString() };
    dbsOf(store).accounts.put(id, next);
    return next;
  });
}
