/** The LMDB engine's LmdbMtaSts: the port's verbs over the functions of store/lmdb/. */
import type { CachedStsPolicy, MtaStsPort } from '../../port/delivery-state.js';
import type { Store } from '../env.js';
import { cachedStsPolicy, saveStsPolicy } from '../mta-sts.js';

export class LmdbMtaSts implements MtaStsPort {
  constructor(private readonly store: Store) {}

  async get(domain: string): Promise<CachedStsPolicy | undefined> {
    return cachedStsPolicy(this.store, domain);
  }

  save(domain: string, entry: CachedStsPolicy): Promise<void> {
    return saveStsPolicy(this.store, domain, entry);
  }
}
