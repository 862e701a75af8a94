/** The LMDB engine's LmdbApiKeys: the port's verbs over the functions of store/lmdb/. */
import type { Store } from '../env.js';
import type { ApiKeysPort } from '../../port/index.js';

export class LmdbApiKeys implements ApiKeysPort {
  constructor(private readonly store: Store) {}
}
