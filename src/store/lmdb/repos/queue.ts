/** The LMDB engine's LmdbQueue: the port's verbs over the functions of store/lmdb/. */
import type { Store } from '../env.js';
import type { QueuePort } from '../../port/index.js';

export class LmdbQueue implements QueuePort {
  constructor(private readonly store: Store) {}
}
