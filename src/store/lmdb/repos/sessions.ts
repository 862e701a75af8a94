/** The LMDB engine's LmdbSessions: the port's verbs over the functions of store/lmdb/. */
import type { Store } from '../env.js';
import type { DashboardSessionsPort } from '../../port/index.js';

export class LmdbSessions implements DashboardSessionsPort {
  constructor(private readonly store: Store) {}
}
