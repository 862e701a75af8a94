/**
 * The account verbs of the operator (`postrider accounts`). Accounts are made and switched
 * between pending, active and suspended only by the operator; the API has no account routes.
 */
import type { Account, AccountState } from '../domain/types.js';
import { createAccount, listAccounts, setAccountState } from '../store/lmdb/accounts.js';
import type { LmdbStore } from '../store/lmdb/engine.js';

export function create(store: LmdbStore, input: { name: string; state: AccountState }): Promise<Account> {
  return createAccount(store, input);
}

export function list(store: LmdbStore): Account[] {
  return listAccounts(store);
}

/** The updated account; undefined for an unknown id. */
export function setState(store: LmdbStore, id: string, state: AccountState): Promise<Account | undefined> {
  return setAccountState(store, id, state);
}
