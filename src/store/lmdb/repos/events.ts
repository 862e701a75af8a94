/** The LMDB engine's LmdbEvents: the port's verbs over the functions of store/lmdb/. */
import type { Store } from '../env.js';
import type { EventsPort } from '../../port/index.js';

export class LmdbEvents implements EventsPort {
  constructor(private readonly store: Store) {}
}
