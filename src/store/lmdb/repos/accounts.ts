/** The LMDB engine's LmdbAccounts: the port's verbs over the functions of store/lmdb/. */
import type { Store } from '../env.js';
import type { AccountsPort } from '../../port/index.js';

export class LmdbAccounts implements AccountsPort {
  constructor(private readonly store: Store) {}
}
