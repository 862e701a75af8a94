/** /channels: spec 4.1-4.5. */
import type { FastifyInstance } from 'fastify';
import type { Channel, DeliveryType } from '../../domain/types.js';
import type { ChannelInput, ChannelService } from '../../channels/service.js';
import { deliveryTypeSchema, pagingProperties, trackingSchema } from '../schemas.js';
import { channelIdsFilter, schemaErrors } from '../query-params.js';
import { channelDetailBody, channelPageBody } from '../response-schemas.js';
import type { ChannelDetail, ChannelSummary, Page } from '../../domain/wire.js';

/** No control characters (as NO_CONTROL_CHARS), and not blank: a name of spaces only cannot be told apart in a list. */
const nameSchema = { type: 'string', minLength: 1, maxLength: 100, pattern: '^(?:(?=.*\\S)[^\\u0000-\\u001f\\u007f]*)?$' } as const;

/** A pool of delivery.pools (checked by the service against the configuration). */
const ipPoolSchema = { type: 'string', minLength: 1, maxLength: 63, description: 'Pool of sending IPs (delivery.pools) the channel\'s mail goes out through; absent: delivery.defaultPools of its mail type.' } as const;

const createBody = {
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: { name: nameSchema, deliveryType: deliveryTypeSchema, tracking: trackingSchema, ipPool: ipPoolSchema },
} as const;

const updateBody = {
  type: 'object',
  additionalProperties: false,
  // null takes the channel's pool away (back to the default pool of each mail type).
  properties: { name: nameSchema, deliveryType: deliveryTypeSchema, tracking: trackingSchema, ipPool: { ...ipPoolSchema, type: ['string', 'null'] } },
} as const;

const listQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ...pagingProperties,
    name: { type: 'string', maxLength: 100 },
    channelIds: { type: 'string', maxLength: 20_000 },
    deliveryType: deliveryTypeSchema,
  },
} as const;

const idOf = (req: { params: unknown }) => (req.params as { id: string }).id;

/** The detailed form (create, update, retrieve). */
export function channelDetail(c: Channel): ChannelDetail {
  return { id: c.id, name: c.name, deliveryType: c.deliveryType, tracking: c.tracking, ipPool: c.ipPool, createdAt: c.createdAt, updatedAt: c.updatedAt };
}

/** The summary form (list items, spec 2.1). */
function channelSummary(c: Channel): ChannelSummary {
  return { id: c.id, name: c.name, deliveryType: c.deliveryType, createdAt: c.createdAt };
}

export const channelRoutes = (channels: ChannelService) => (app: FastifyInstance): void => {
  app.post('/channels', { schema: { body: createBody, response: { 200: channelDetailBody } } }, async (req) => {
    return channelDetail(await channels.create(req.principal, req.body as ChannelInput & { name: string }));
  });

  app.get('/channels', { schema: { querystring: listQuery, response: { 200: channelPageBody } }, attachValidation: true }, async (req): Promise<Page<ChannelSummary>> => {
    const q = req.query as { limit?: number; offset?: number; name?: string; channelIds?: string; deliveryType?: DeliveryType };
    const errors = schemaErrors(req);
    const ids = channelIdsFilter(q.channelIds, req.principal, errors);
    errors.throwIfAny('The query has invalid parameters');
    const { results, totalCount } = await channels.list({
      accountId: req.principal.accountId,
      ids,
      name: q.name,
      deliveryType: q.deliveryType,
      limit: q.limit ?? 25,
      offset: q.offset ?? 0,
    });
    return { results: results.map(channelSummary), totalCount };
  });

  app.get('/channels/:id', { schema: { response: { 200: channelDetailBody } } }, async (req) => {
    return channelDetail(await channels.get(req.principal, idOf(req)));
  });

  app.patch('/channels/:id', { schema: { body: updateBody, response: { 200: channelDetailBody } } }, async (req) => {
    return channelDetail(await channels.update(req.principal, idOf(req), req.body as ChannelInput));
  });

  app.delete('/channels/:id', async (req, reply) => {
    await channels.delete(req.principal, idOf(req));
    return reply.code(204).send();
  });
};
