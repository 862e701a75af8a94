/** The LMDB engine's LmdbWebhooks: the port's verbs over the functions of store/lmdb/. */
import type { Store } from '../env.js';
import type { WebhooksPort } from '../../port/index.js';

export class LmdbWebhooks implements WebhooksPort {
  constructor(private readonly store: Store) {}
}
