/** The LMDB engine's LmdbEngagement: the port's verbs over the functions of store/lmdb/. */
import type { Store } from '../env.js';
import type { EngagementPort } from '../../port/index.js';

export class LmdbEngagement implements EngagementPort {
  constructor(private readonly store: Store) {}
}
