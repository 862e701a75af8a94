/** The LMDB engine's LmdbStatistics: the port's verbs over the functions of store/lmdb/. */
import type { Store } from '../env.js';
import type { StatisticsPort } from '../../port/index.js';

export class LmdbStatistics implements StatisticsPort {
  constructor(private readonly store: Store) {}
}
