/** The LMDB engine's LmdbMtaSts: the port's verbs over the functions of store/lmdb/. */
import type { Store } from '../env.js';
import type { MtaStsPort } from '../../port/index.js';

export class LmdbMtaSts implements MtaStsPort {
  constructor(private readonly store: Store) {}
}
