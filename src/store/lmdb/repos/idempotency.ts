/** The LMDB engine's LmdbIdempotency: the port's verbs over the functions of store/lmdb/. */
import type { Store } from '../env.js';
import type { IdempotencyPort } from '../../port/index.js';

export class LmdbIdempotency implements IdempotencyPort {
  constructor(private readonly store: Store) {}
}
