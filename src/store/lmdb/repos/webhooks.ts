/** The LMDB engine's LmdbWebhooks: the port's verbs over the functions of store/lmdb/. */
import type { Webhook, WebhookStatus } from '../../../domain/webhook.js';
import type { Store } from '../env.js';
import type { WebhooksPort } from '../../port/index.js';
import type { NewWebhook, NewWebhookInput, WebhookFilter, WebhookPatch } from '../../port/webhooks.js';
import {
  createWebhook,
  deleteWebhook,
  getSigningKey,
  getWebhook,
  getWebhookStatus,
  listWebhooks,
  regenerateSigningKey,
  updateWebhook,
} from '../webhooks.js';

export class LmdbWebhooks implements WebhooksPort {
  constructor(private readonly store: Store) {}

  /** Counts and inserts inside one write (webhooks.ts), which also forgets the "no webhooks" flag. */
  create(input: NewWebhookInput): Promise<NewWebhook> {
    return createWebhook(this.store, input);
  }

  async get(id: string): Promise<Webhook | undefined> {
    return getWebhook(this.store, id);
  }

  async signingKey(id: string): Promise<string | null> {
    return getSigningKey(this.store, id);
  }

  async status(id: string): Promise<WebhookStatus> {
    return getWebhookStatus(this.store, id);
  }

  async list(f: WebhookFilter): Promise<{ results: Webhook[]; totalCount: number }> {
    return listWebhooks(this.store, f);
  }

  update(id: string, patch: WebhookPatch): Promise<Webhook | undefined> {
    return updateWebhook(this.store, id, patch);
  }

  regenerateSigningKey(id: string): Promise<NewWebhook | undefined> {
    return regenerateSigningKey(this.store, id);
  }

  delete(id: string): Promise<boolean> {
    return deleteWebhook(this.store, id);
  }
}
