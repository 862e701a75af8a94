/** The LMDB engine's LmdbSuppressions: the port's verbs over the functions of store/lmdb/. */
import type { Store } from '../env.js';
import type { SuppressionsPort } from '../../port/index.js';

export class LmdbSuppressions implements SuppressionsPort {
  constructor(private readonly store: Store) {}
}
