/** The LMDB engine's LmdbWebhookOutbox: the port's verbs over the functions of store/lmdb/. */
import type { Store } from '../env.js';
import type { WebhookOutboxPort } from '../../port/index.js';

export class LmdbWebhookOutbox implements WebhookOutboxPort {
  constructor(private readonly store: Store) {}
}
