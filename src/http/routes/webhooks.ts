/**
 * /webhooks: signed event delivery (the spec names webhooks only; DESIGN.md holds the choices).
 *
 * Access, as for channels and domains: writes need an account-level key; a channel key may read
 * the webhooks bound to its own channel. Another account's webhook is 403, an unknown one 404
 * not_found; a channelId that is unknown is 404 channel_not_found, another account's 403.
 * The signing key is in the answer of create and regenerate-signing-key only.
 */
import type { FastifyInstance } from 'fastify';
import { AppError, FieldErrorList } from '../../domain/errors.js';
import { EVENT_TYPES, type EventType, type Principal } from '../../domain/types.js';
import { HEADER_NAME_PATTERN, HEADER_VALUE_PATTERN, isReservedHeader, type Webhook, type WebhookHeader } from '../../domain/webhook.js';
import type { Store } from '../../store/env.js';
import { pendingCount } from '../../store/webhook-outbox.js';
import {
  createWebhook,
  deleteWebhook,
  getWebhook,
  getWebhookStatus,
  listWebhooks,
  regenerateSigningKey,
  updateWebhook,
  type WebhookPatch,
} from '../../store/webhooks.js';
import { MAX_URL_LENGTH, type WebhookTargets } from '../../webhooks/targets.js';
import { channelFor, isUuid, requireAccountKey } from '../auth.js';
import { channelIdsFilter } from '../query-params.js';
import { pagingProperties } from '../schemas.js';
import type { HttpContext } from '../server.js';

const urlSchema = { type: 'string', minLength: 1, maxLength: MAX_URL_LENGTH } as const;
const eventsSchema = { type: 'array', minItems: 1, maxItems: EVENT_TYPES.length, uniqueItems: true, items: { type: 'string', enum: [...EVENT_TYPES] } } as const;
const channelIdSchema = { type: ['string', 'null'], format: 'uuid' } as const;
const headersSchema = {
  type: 'array',
  maxItems: 20,
  items: {
    type: 'object',
    additionalProperties: false,
    required: ['name', 'value'],
    properties: {
      name: { type: 'string', minLength: 1, maxLength: 100, pattern: HEADER_NAME_PATTERN },
      value: { type: 'string', maxLength: 2000, pattern: HEADER_VALUE_PATTERN },
    },
  },
} as const;

const properties = { url: urlSchema, events: eventsSchema, channelId: channelIdSchema, enabled: { type: 'boolean' }, additionalHeaders: headersSchema } as const;

const createBody = { type: 'object', additionalProperties: false, required: ['url', 'events'], properties } as const;
const updateBody = { type: 'object', additionalProperties: false, properties } as const;

const listQuery = {
  type: 'object',
  additionalProperties: false,
  properties: { ...pagingProperties, channelIds: { type: 'string', maxLength: 20_000 } },
} as const;

interface WebhookBody {
  url?: string;
  events?: EventType[];
  channelId?: string | null;
  enabled?: boolean;
  additionalHeaders?: WebhookHeader[];
}

function webhookJson(store: Store, w: Webhook) {
  const s = getWebhookStatus(store, w.id);
  return {
    id: w.id,
    url: w.url,
    events: w.events,
    channelId: w.channelId,
    enabled: w.enabled,
    additionalHeaders: w.additionalHeaders,
    createdAt: w.createdAt,
    updatedAt: w.updatedAt,
    lastResponse: s.lastResponse,
    deliveryStats: {
      succeeded: s.succeeded,
      failedAttempts: s.failedAttempts,
      failed: s.failed,
      consecutiveFailures: s.consecutiveFailures,
      pending: pendingCount(store, w.id),
    },
  };
}

/** The webhook a request names, if the principal may see it. */
function webhookFor(store: Store, p: Principal, id: string): Webhook {
  const w = isUuid(id) ? getWebhook(store, id.toLowerCase()) : undefined;
  if (!w) throw new AppError('not_found', `Webhook ${id} does not exist`);
  if (w.accountId !== p.accountId || (p.channelId && w.channelId !== p.channelId)) {
    throw new AppError('forbidden', 'The API key may not access this webhook');
  }
  return w;
}

/** Checks made in code (URL target, reserved and repeated header names), all reported together. */
async function checkBody(targets: WebhookTargets, body: WebhookBody): Promise<void> {
  const errors = new FieldErrorList();
  if (body.url !== undefined) {
    const problem = await targets.checkUrl(body.url);
    if (problem) errors.add('/url', problem.code, problem.message);
  }
  const seen = new Set<string>();
  (body.additionalHeaders ?? []).forEach((h, i) => {
    const lower = h.name.toLowerCase();
    if (isReservedHeader(lower)) errors.add(`/additionalHeaders/${i}/name`, 'reserved_header', `${h.name} is set by postrider and cannot be replaced`);
    else if (seen.has(lower)) errors.add(`/additionalHeaders/${i}/name`, 'duplicate_items', `${h.name} is given twice`);
    seen.add(lower);
  });
  errors.throwIfAny('The request body has invalid fields');
}

/** A channelId in a body: a live channel of the caller's account (404 channel_not_found, 403). */
function channelOf(store: Store, p: Principal, id: string | null | undefined): string | null | undefined {
  return id === undefined || id === null ? id : channelFor(store, p, id).id;
}

export function webhookRoutes(targets: WebhookTargets) {
  return (app: FastifyInstance, { store, config }: HttpContext): void => {
    app.post('/webhooks', { schema: { body: createBody } }, async (req) => {
      requireAccountKey(req.principal);
      const body = req.body as WebhookBody;
      const channelId = channelOf(store, req.principal, body.channelId) ?? null;
      await checkBody(targets, body);
      const { webhook, signingKey } = await createWebhook(store, {
        accountId: req.principal.accountId,
        channelId,
        url: body.url!,
        events: body.events!,
        enabled: body.enabled ?? true,
        additionalHeaders: body.additionalHeaders ?? [],
        maxPerAccount: config.webhooks.maxPerAccount,
      });
      return { ...webhookJson(store, webhook), signingKey };
    });

    app.get('/webhooks', { schema: { querystring: listQuery } }, async (req) => {
      const q = req.query as { limit?: number; offset?: number; channelIds?: string };
      const { results, totalCount } = listWebhooks(store, {
        accountId: req.principal.accountId,
        channelIds: channelIdsFilter(q.channelIds, req.principal),
        limit: q.limit ?? 25,
        offset: q.offset ?? 0,
      });
      return { results: results.map((w) => webhookJson(store, w)), totalCount };
    });

    app.get('/webhooks/:id', async (req) => webhookJson(store, webhookFor(store, req.principal, (req.params as { id: string }).id)));

    app.patch('/webhooks/:id', { schema: { body: updateBody } }, async (req) => {
      const webhook = webhookFor(store, req.principal, (req.params as { id: string }).id);
      requireAccountKey(req.principal);
      const body = req.body as WebhookBody;
      const patch: WebhookPatch = { ...body, channelId: channelOf(store, req.principal, body.channelId) };
      await checkBody(targets, body);
      const updated = await updateWebhook(store, webhook.id, patch);
      if (!updated) throw new AppError('not_found', `Webhook ${webhook.id} does not exist`);
      return webhookJson(store, updated);
    });

    app.delete('/webhooks/:id', async (req, reply) => {
      const webhook = webhookFor(store, req.principal, (req.params as { id: string }).id);
      requireAccountKey(req.principal);
      if (!(await deleteWebhook(store, webhook.id))) throw new AppError('not_found', `Webhook ${webhook.id} does not exist`);
      return reply.code(204).send();
    });

    app.post('/webhooks/:id/regenerate-signing-key', async (req) => {
      const webhook = webhookFor(store, req.principal, (req.params as { id: string }).id);
      requireAccountKey(req.principal);
      const next = await regenerateSigningKey(store, webhook.id);
      if (!next) throw new AppError('not_found', `Webhook ${webhook.id} does not exist`);
      return { ...webhookJson(store, next.webhook), signingKey: next.signingKey };
    });
  };
}
