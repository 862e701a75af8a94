/**
 * /webhooks: signed event delivery (the spec names webhooks only; DESIGN.md holds the choices).
 *
 * Access (checked by WebhookService, which each handler calls once), as for channels and
 * domains: writes need an account-level key; a channel key may read
 * the webhooks bound to its own channel. Another account's webhook is 403, an unknown one 404
 * not_found; a channelId that is unknown is 404 channel_not_found, another account's 403.
 * Every answer carries `payloadSigningKey` (the SDKs read it from each of them); the older
 * `signingKey` field, shown by create and regenerate only, is gone.
 */
import type { FastifyInstance } from 'fastify';
import { EVENT_TYPES, type EventType, type Principal } from '../../domain/types.js';
import type { Webhook, WebhookHeader } from '../../domain/webhook.js';
import { headersSchema, MASKED_HEADER_VALUE, urlSchema } from '../endpoint-schemas.js';
import type { WebhookService } from '../../webhooks/service.js';
import { channelIdsFilter, schemaErrors } from '../query-params.js';
import { pagingProperties } from '../schemas.js';
import { webhookBody, webhookPageBody, webhookTestBody } from '../response-schemas.js';
import type { Page, Webhook as WebhookJson, WebhookTestOutcome } from '../../domain/wire.js';

const eventsSchema = { type: 'array', minItems: 1, maxItems: EVENT_TYPES.length, uniqueItems: true, items: { type: 'string', enum: [...EVENT_TYPES] } } as const;
const channelIdSchema = { type: ['string', 'null'], format: 'uuid' } as const;

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


/**
 * The answer of every webhook operation (api-surface.md), plus postrider's dates and counters.
 * additionalHeaders values (tokens of the receiving service) are shown to account-level keys only.
 */
async function webhookJson(webhooks: WebhookService, w: Webhook, p: Principal): Promise<WebhookJson> {
  const { signingKey, status: s, pending } = await webhooks.state(w.id);
  return {
    id: w.id,
    channelId: w.channelId,
    url: w.url,
    // A webhook is stored with its key; without one (never seen) the route's response schema wrote "" already.
    payloadSigningKey: signingKey ?? '',
    enabled: w.enabled,
    additionalHeaders: p.channelId ? w.additionalHeaders.map((h) => ({ ...h, value: MASKED_HEADER_VALUE })) : w.additionalHeaders,
    events: w.events,
    // null until the first attempt: nothing has answered yet.
    lastResponse: s.lastResponse,
    // The same answer with the event type it was for (lastEvent: absent in statuses kept before it was).
    lastDelivery: s.lastResponse ? { at: s.lastResponse.at, event: s.lastEvent ?? null, statusCode: s.lastResponse.statusCode, error: s.lastResponse.error } : null,
    createdAt: w.createdAt,
    updatedAt: w.updatedAt,
    deliveryStats: {
      succeeded: s.succeeded,
      failedAttempts: s.failedAttempts,
      failed: s.failed,
      consecutiveFailures: s.consecutiveFailures,
      pending,
    },
  };
}

export function webhookRoutes(webhooks: WebhookService) {
  return (app: FastifyInstance): void => {
    const idOf = (req: { params: unknown }) => (req.params as { id: string }).id;

    app.post('/webhooks', { schema: { body: createBody, response: { 200: webhookBody } } }, async (req) => {
      const created = await webhooks.create(req.principal, req.body as WebhookBody & { url: string; events: EventType[] });
      return webhookJson(webhooks, created, req.principal);
    });

    app.get('/webhooks', { schema: { querystring: listQuery, response: { 200: webhookPageBody } }, attachValidation: true }, async (req): Promise<Page<WebhookJson>> => {
      const q = req.query as { limit?: number; offset?: number; channelIds?: string };
      const errors = schemaErrors(req);
      const channelIds = channelIdsFilter(q.channelIds, req.principal, errors);
      errors.throwIfAny('The query has invalid parameters');
      const { results, totalCount } = await webhooks.list({
        accountId: req.principal.accountId,
        channelIds,
        limit: q.limit ?? 25,
        offset: q.offset ?? 0,
      });
      return { results: await Promise.all(results.map((w) => webhookJson(webhooks, w, req.principal))), totalCount };
    });

    app.get('/webhooks/:id', { schema: { response: { 200: webhookBody } } }, async (req) => webhookJson(webhooks, await webhooks.visibleTo(req.principal, idOf(req)), req.principal));

    app.patch('/webhooks/:id', { schema: { body: updateBody, response: { 200: webhookBody } } }, async (req) => {
      return webhookJson(webhooks, await webhooks.update(req.principal, idOf(req), req.body as WebhookBody), req.principal);
    });

    app.delete('/webhooks/:id', async (req, reply) => {
      await webhooks.remove(req.principal, idOf(req));
      return reply.code(204).send();
    });

    // The body ({eventType?}, optional) is checked by the service after the access rules.
    app.post('/webhooks/:id/test', { schema: { response: { 200: webhookTestBody } } }, async (req): Promise<WebhookTestOutcome> => webhooks.test(req.principal, idOf(req), req.body));

    app.post('/webhooks/:id/regenerate-signing-key', { schema: { response: { 200: webhookBody } } }, async (req) => {
      return webhookJson(webhooks, await webhooks.regenerateKey(req.principal, idOf(req)), req.principal);
    });
  };
}
