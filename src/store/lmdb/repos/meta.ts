/** The LMDB engine's LmdbMeta: the port's verbs over the functions of store/lmdb/. */
import type { Store } from '../env.js';
import type { MetaPort } from '../../port/index.js';

export class LmdbMeta implements MetaPort {
  constructor(private readonly store: Store) {}
}
