/** The LMDB engine's LmdbMessages: the port's verbs over the functions of store/lmdb/. */
import type { Store } from '../env.js';
import type { MessagesPort } from '../../port/index.js';

export class LmdbMessages implements MessagesPort {
  constructor(private readonly store: Store) {}
}
