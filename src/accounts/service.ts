/**
 * The account verbs of the operator (`postrider accounts`). Accounts are made and switched
 * between pending, active and suspended only by the operator; the API has no account routes.
 */
import type { Account, AccountState } from '../domain/types.js';
import type { StorePort } from '../store/port/index.js';

export function create(store: StorePort, input: { name: string; state: AccountState }): Promise<Account> {
  return store.accounts.create(input);
}

export function list(store: StorePort): Promise<Account[]> {
  return store.accounts.list();
}

/** The updated account; undefined for an unknown id. */
export function setState(store: StorePort, id: string, state: AccountState): Promise<Account | undefined> {
  return store.accounts.setState(id, state);
}
