/**
 * /inbound/routes (issue 33): which address of an account's domain receives mail, and the URL
 * its messages are POSTed to, signed with the route's `payloadSigningKey`.
 *
 * Access (checked by InboundRouteService, which each handler calls once), as for webhooks: writes
 * need an account-level key; a channel key may read the routes of its own channel (their
 * additionalHeaders values masked). Another account's route is 403, an unknown one 404
 * not_found; a channelId that is unknown is 404 channel_not_found, another account's 403.
 */
import type { FastifyInstance } from 'fastify';
import type { Principal } from '../../domain/types.js';
import type { WebhookHeader } from '../../domain/webhook.js';
import type { InboundRoute as InboundRouteJson, Page } from '../../domain/wire.js';
import type { InboundRouteService, NewRouteInput, RouteInput, RouteWithSigningKey } from '../../inbound/routes.js';
import { headersSchema, MASKED_HEADER_VALUE, urlSchema } from '../endpoint-schemas.js';
import { channelIdsFilter, schemaErrors } from '../query-params.js';
import { inboundRouteBody, inboundRoutePageBody } from '../response-schemas.js';
import { pagingProperties } from '../schemas.js';

/** RFC 5321 4.5.3.1.3: an address is at most 254 octets; the service checks its form. */
const addressSchema = { type: 'string', minLength: 3, maxLength: 254 } as const;
const channelIdSchema = { type: 'string', format: 'uuid' } as const;

const changeable = { url: urlSchema, channelId: channelIdSchema, enabled: { type: 'boolean' }, additionalHeaders: headersSchema } as const;

const createBody = {
  type: 'object',
  additionalProperties: false,
  required: ['channelId', 'address', 'url'],
  properties: { ...changeable, address: addressSchema },
} as const;
// The address is the route's identity (match() looks it up): another address is another route.
const updateBody = { type: 'object', additionalProperties: false, properties: changeable } as const;

const listQuery = {
  type: 'object',
  additionalProperties: false,
  properties: { ...pagingProperties, channelIds: { type: 'string', maxLength: 20_000 } },
} as const;

/** The answer of every route operation; additionalHeaders values are shown to account-level keys only. */
function routeJson({ route: r, signingKey }: RouteWithSigningKey, p: Principal): InboundRouteJson {
  const headers: WebhookHeader[] = p.channelId ? r.additionalHeaders.map((h) => ({ ...h, value: MASKED_HEADER_VALUE })) : r.additionalHeaders;
  return {
    id: r.id,
    channelId: r.channelId,
    domainId: r.domainId,
    address: r.address,
    url: r.url,
    payloadSigningKey: signingKey,
    enabled: r.enabled,
    additionalHeaders: headers,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
}

export function inboundRouteRoutes(routes: InboundRouteService) {
  return (app: FastifyInstance): void => {
    const idOf = (req: { params: unknown }) => (req.params as { id: string }).id;

    app.post('/inbound/routes', { schema: { body: createBody, response: { 200: inboundRouteBody } } }, async (req) => {
      return routeJson(await routes.create(req.principal, req.body as NewRouteInput), req.principal);
    });

    app.get('/inbound/routes', { schema: { querystring: listQuery, response: { 200: inboundRoutePageBody } }, attachValidation: true }, async (req): Promise<Page<InboundRouteJson>> => {
      const q = req.query as { limit?: number; offset?: number; channelIds?: string };
      const errors = schemaErrors(req);
      const channelIds = channelIdsFilter(q.channelIds, req.principal, errors);
      errors.throwIfAny('The query has invalid parameters');
      const { results, totalCount } = await routes.list({ accountId: req.principal.accountId, channelIds, limit: q.limit ?? 25, offset: q.offset ?? 0 });
      return { results: results.map((r) => routeJson(r, req.principal)), totalCount };
    });

    app.get('/inbound/routes/:id', { schema: { response: { 200: inboundRouteBody } } }, async (req) => routeJson(await routes.visibleTo(req.principal, idOf(req)), req.principal));

    app.patch('/inbound/routes/:id', { schema: { body: updateBody, response: { 200: inboundRouteBody } } }, async (req) => {
      return routeJson(await routes.update(req.principal, idOf(req), req.body as RouteInput), req.principal);
    });

    app.delete('/inbound/routes/:id', async (req, reply) => {
      await routes.remove(req.principal, idOf(req));
      return reply.code(204).send();
    });

    app.post('/inbound/routes/:id/regenerate-signing-key', { schema: { response: { 200: inboundRouteBody } } }, async (req) => {
      return routeJson(await routes.regenerateKey(req.principal, idOf(req)), req.principal);
    });
  };
}
