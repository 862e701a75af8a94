/**
 * The webhook service: the writes of /webhooks with their policy (the URL target check and the
 * header rules, all reported together), so the route only checks access, parses and maps.
 * Every answer carries the signing key: the SDKs read `payloadSigningKey` from create, retrieve,
 * update, list and regenerate alike (api-surface.md).
 */
import { AppError, FieldErrorList } from '../domain/errors.js';
import type { EventType } from '../domain/types.js';
import { isReservedHeader, type Webhook, type WebhookHeader } from '../domain/webhook.js';
import type { Store } from '../store/env.js';
import { createWebhook, deleteWebhook, regenerateSigningKey, updateWebhook } from '../store/webhooks.js';
import type { WebhookTargets } from './targets.js';

export interface WebhookInput {
  url?: string;
  events?: EventType[];
  /** Already checked against the caller (a live channel of the account), or null: every channel. */
  channelId?: string | null;
  enabled?: boolean;
  additionalHeaders?: WebhookHeader[];
}

export interface WebhookServiceOptions {
  store: Store;
  targets: WebhookTargets;
  maxPerAccount: number;
}

export class WebhookService {
  constructor(private readonly o: WebhookServiceOptions) {}

  async create(accountId: string, input: WebhookInput & { url: string; events: EventType[] }): Promise<Webhook> {
    await this.check(input);
    const { webhook } = await createWebhook(this.o.store, {
      accountId,
      channelId: input.channelId ?? null,
      url: input.url,
      events: input.events,
      enabled: input.enabled ?? true,
      additionalHeaders: input.additionalHeaders ?? [],
      maxPerAccount: this.o.maxPerAccount,
    });
    return webhook;
  }

  async update(id: string, input: WebhookInput): Promise<Webhook> {
    await this.check(input);
    return found(id, await updateWebhook(this.o.store, id, input));
  }

  async remove(id: string): Promise<void> {
    if (!(await deleteWebhook(this.o.store, id))) throw notFound(id);
  }

  /** The old key stops signing at once; deliveries in flight finish with it. */
  async regenerateKey(id: string): Promise<Webhook> {
    return found(id, (await regenerateSigningKey(this.o.store, id))?.webhook);
  }

  /** Checks made in code (URL target, reserved and repeated header names), all reported together. */
  private async check(input: WebhookInput): Promise<void> {
    const errors = new FieldErrorList();
    if (input.url !== undefined) {
      const problem = await this.o.targets.checkUrl(input.url);
      if (problem) errors.add('/url', problem.code, problem.message);
    }
    const seen = new Set<string>();
    (input.additionalHeaders ?? []).forEach((h, i) => {
      const lower = h.name.toLowerCase();
      if (isReservedHeader(lower)) errors.add(`/additionalHeaders/${i}/name`, 'reserved_header', `${h.name} is set by postrider and cannot be replaced`);
      else if (seen.has(lower)) errors.add(`/additionalHeaders/${i}/name`, 'duplicate_items', `${h.name} is given twice`);
      seen.add(lower);
    });
    errors.throwIfAny('The request body has invalid fields');
  }
}

function notFound(id: string): AppError {
  return new AppError('not_found', `Webhook ${id} does not exist`);
}

function found(id: string, w: Webhook | undefined): Webhook {
  if (!w) throw notFound(id);
  return w;
}
