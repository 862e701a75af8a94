/** The LMDB engine's LmdbRetention: the port's verbs over the functions of store/lmdb/. */
import type { Store } from '../env.js';
import type { RetentionPort } from '../../port/index.js';

export class LmdbRetention implements RetentionPort {
  constructor(private readonly store: Store) {}
}
