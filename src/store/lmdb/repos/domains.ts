/** The LMDB engine's LmdbDomains: the port's verbs over the functions of store/lmdb/. */
import type { Store } from '../env.js';
import type { DomainsPort } from '../../port/index.js';

export class LmdbDomains implements DomainsPort {
  constructor(private readonly store: Store) {}
}
