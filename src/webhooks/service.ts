/**
 * The webhook service: the writes of /webhooks with their policy (the URL target check and the
 * header rules, all reported together), the reads, and the access rules, so the route only
 * parses and maps: writes need an account-level key, a bound channel must be a live channel of
 * the caller's account (channels/service.ts accessibleChannel).
 * Every answer carries the signing key: the SDKs read `payloadSigningKey` from create, retrieve,
 * update, list and regenerate alike (api-surface.md).
 */
import { accessibleChannel } from '../channels/service.js';
import { requireAccountKey } from '../domain/access.js';
import { randomUUID } from 'node:crypto';
import { AppError, FieldErrorList } from '../domain/errors.js';
import { optionalEnumField } from '../domain/optional-body.js';
import { EVENT_TYPES, type EventType, type Principal } from '../domain/types.js';
import { isUuid } from '../domain/uuid.js';
import type { Webhook, WebhookHeader, WebhookStatus } from '../domain/webhook.js';
import { checkEndpoint } from './endpoint-check.js';
import type { StorePort } from '../store/port/index.js';
import type { WebhookFilter } from '../store/port/webhooks.js';
import { postWebhook, type PostFn } from './http-post.js';
import { RESPONSE_BYTES, sendSigned } from './request.js';
import type { WebhookTargets } from './targets.js';
import { testPayload } from './test-event.js';

export interface WebhookInput {
  url?: string;
  events?: EventType[];
  /** A live channel of the caller's account (checked by each verb), or null: every channel. */
  channelId?: string | null;
  enabled?: boolean;
  additionalHeaders?: WebhookHeader[];
}

export interface WebhookServiceOptions {
  store: StorePort;
  targets: WebhookTargets;
  /** config.webhooks.maxPerAccount */
  maxPerAccount: number;
  /** config.webhooks.timeoutMs: a test request's deadline, as a delivery's. */
  timeoutMs: number;
  /** Replaces the HTTP request (tests). */
  post?: PostFn;
}

/** What a test request got: the endpoint's status code (null without an answer), the error (null on a 2xx), how long it took. */
export interface TestOutcome {
  eventType: EventType;
  /** X-Service-Webhook-Id of the test request. */
  deliveryId: string;
  statusCode: number | null;
  error: string | null;
  ms: number;
}

/** What an answer shows besides the webhook: its signing key and delivery counters. */
export interface WebhookState {
  signingKey: string | null;
  status: WebhookStatus;
  /** Outbox entries waiting (in flight included). */
  pending: number;
}

export class WebhookService {
  constructor(private readonly o: WebhookServiceOptions) {}

  /**
   * The webhook a request names, if the principal may see it: unknown (or malformed) 404
   * not_found; another account's, or not bound to a channel key's channel, 403.
   */
  async visibleTo(p: Principal, id: string): Promise<Webhook> {
    const w = isUuid(id) ? await this.o.store.webhooks.get(id.toLowerCase()) : undefined;
    if (!w) throw notFound(id);
    if (w.accountId !== p.accountId || (p.channelId && w.channelId !== p.channelId)) {
      throw new AppError('forbidden', 'The API key may not access this webhook');
    }
    return w;
  }

  list(filter: WebhookFilter): Promise<{ results: Webhook[]; totalCount: number }> {
    return this.o.store.webhooks.list(filter);
  }

  async state(webhookId: string): Promise<WebhookState> {
    const { store } = this.o;
    const [signingKey, status, pending] = await Promise.all([store.webhooks.signingKey(webhookId), store.webhooks.status(webhookId), store.webhookOutbox.pendingCount(webhookId)]);
    return { signingKey, status, pending };
  }

  /** Account-level keys only; the bound channel is checked before the URL and the headers. */
  async create(p: Principal, input: WebhookInput & { url: string; events: EventType[] }): Promise<Webhook> {
    requireAccountKey(p);
    const channelId = await this.channelOf(p, input.channelId);
    await this.check(input);
    const { webhook } = await this.o.store.webhooks.create({
      accountId: p.accountId,
      channelId: channelId ?? null,
      url: input.url,
      events: input.events,
      enabled: input.enabled ?? true,
      additionalHeaders: input.additionalHeaders ?? [],
      maxPerAccount: this.o.maxPerAccount,
    });
    return webhook;
  }

  /** Whether the webhook is visible (404/403) comes before whether the key may write it (403). */
  async update(p: Principal, id: string, input: WebhookInput): Promise<Webhook> {
    const webhook = await this.writableBy(p, id);
    const checked = { ...input, channelId: await this.channelOf(p, input.channelId) };
    await this.check(checked);
    return found(webhook.id, await this.o.store.webhooks.update(webhook.id, checked));
  }

  async remove(p: Principal, id: string): Promise<void> {
    const webhook = await this.writableBy(p, id);
    if (!(await this.o.store.webhooks.delete(webhook.id))) throw notFound(webhook.id);
  }

  /** The old key stops signing at once; deliveries in flight finish with it. */
  async regenerateKey(p: Principal, id: string): Promise<Webhook> {
    const webhook = await this.writableBy(p, id);
    return found(webhook.id, (await this.o.store.webhooks.regenerateSigningKey(webhook.id))?.webhook);
  }

  /**
   * Sends a test event (test-event.ts; the webhook's first event type unless one is given) to the
   * endpoint now, signed and checked as a delivery is, and says what came back. Account-level
   * keys only (it makes postrider call out). A disabled webhook is tested too (a test before
   * enabling it). Nothing is recorded: lastResponse, lastDelivery and deliveryStats count real
   * deliveries only.
   */
  async test(p: Principal, id: string, body: unknown): Promise<TestOutcome> {
    const webhook = await this.writableBy(p, id);
    const eventType = optionalEnumField(body, 'eventType', EVENT_TYPES) ?? webhook.events[0];
    const secret = await this.o.store.webhooks.signingKey(webhook.id);
    if (secret === null) throw notFound(webhook.id);
    const started = performance.now();
    const deliveryId = randomUUID();
    const result = await sendSigned(
      { webhook, secret, payload: testPayload(webhook, eventType, new Date()), deliveryId, attempt: 1, test: true },
      { targets: this.o.targets, post: this.o.post ?? postWebhook, timeoutMs: this.o.timeoutMs, maxResponseBytes: RESPONSE_BYTES, nowMs: Date.now() },
    );
    return { eventType, deliveryId, statusCode: result.statusCode, error: result.error, ms: Math.round(performance.now() - started) };
  }

  /** visibleTo, then the account-key rule: a channel key learns 404/403 as for a read first. */
  private async writableBy(p: Principal, id: string): Promise<Webhook> {
    const webhook = await this.visibleTo(p, id);
    requireAccountKey(p);
    return webhook;
  }

  /** A channelId in a body: a live channel of the caller's account (404 channel_not_found, 403). */
  private async channelOf(p: Principal, id: string | null | undefined): Promise<string | null | undefined> {
    return id === undefined || id === null ? id : (await accessibleChannel(this.o.store, p, id)).id;
  }

  /** Checks made in code (URL target, reserved and repeated header names), all reported together. */
  private async check(input: WebhookInput): Promise<void> {
    const errors = new FieldErrorList();
    await checkEndpoint(this.o.targets, input, errors);
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
