/** The LMDB engine's LmdbBroadcasts: the port's verbs over the functions of store/lmdb/. */
import type { Store } from '../env.js';
import type { BroadcastsPort } from '../../port/index.js';

export class LmdbBroadcasts implements BroadcastsPort {
  constructor(private readonly store: Store) {}
}
