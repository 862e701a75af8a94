/** The LMDB engine's LmdbAccounts: the port's verbs over the functions of store/lmdb/. */
import type { Account, AccountState } from '../../../domain/types.js';
import type { Store } from '../env.js';
import type { AccountsPort } from '../../port/index.js';
import { createAccount, getAccount, listAccounts, setAccountState } from '../accounts.js';

export class LmdbAccounts implements AccountsPort {
  constructor(private readonly store: Store) {}

  create(input: { name: string; state: AccountState }): Promise<Account> {
    return createAccount(this.store, input);
  }

  async get(id: string): Promise<Account | undefined> {
    return getAccount(this.store, id);
  }

  async list(): Promise<Account[]> {
    return listAccounts(this.store);
  }

  /** Read and replaced inside one write (one writer): no state set on an account removed meanwhile. */
  setState(id: string, state: AccountState): Promise<Account | undefined> {
    return setAccountState(this.store, id, state);
  }
}
