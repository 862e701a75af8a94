/** /broadcasts: the SDKs' broadcasts.list, retrieve, listFailures, listSuppressions, and cancel (api-surface.md). */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { BROADCAST_STATUSES, cancel, listBroadcasts, listFailures, listSuppressed, retrieveBroadcast, type BroadcastStatus } from '../../broadcasts/service.js';
import { AppError } from '../../domain/errors.js';
import { isUuid } from '../../domain/uuid.js';
import { schemaErrors } from '../query-params.js';
import { pagingProperties } from '../schemas.js';
import type { HttpContext } from '../server.js';
import type { BroadcastDetail, BroadcastFailure, BroadcastSummary, Page as PageOf } from '../../domain/wire.js';

const listQuery = {
  type: 'object',
  additionalProperties: false,
  required: ['channelId'],
  properties: {
    ...pagingProperties,
    channelId: { type: 'string', maxLength: 64 },
    status: { type: 'string', enum: BROADCAST_STATUSES },
    subject: { type: 'string', maxLength: 256 },
  },
} as const;

const pageQuery = { type: 'object', additionalProperties: false, properties: pagingProperties } as const;

interface ListQuery {
  channelId: string;
  status?: BroadcastStatus;
  subject?: string;
  limit?: number;
  offset?: number;
}

/** The path id: a malformed one names no broadcast (404, like an unknown one). */
function broadcastId(req: FastifyRequest): string {
  const id = (req.params as { id: string }).id;
  if (!isUuid(id)) throw new AppError('not_found', `Broadcast ${id} does not exist`);
  return id;
}

/** limit/offset after schema errors were collected (paging defaults as the channel list: 25, 0). */
function page(req: FastifyRequest): { limit: number; offset: number } {
  schemaErrors(req).throwIfAny('The query has invalid parameters');
  const q = req.query as { limit?: number; offset?: number };
  return { limit: q.limit ?? 25, offset: q.offset ?? 0 };
}

export function broadcastRoutes(app: FastifyInstance, { store }: HttpContext): void {
  app.get('/broadcasts', { schema: { querystring: listQuery }, attachValidation: true }, async (req): Promise<PageOf<BroadcastSummary>> => {
    const q = req.query as ListQuery;
    const errors = schemaErrors(req);
    if (typeof q.channelId === 'string' && !isUuid(q.channelId)) errors.add('/channelId', 'invalid_format', 'must be a UUID');
    errors.throwIfAny('The query has invalid parameters');
    return listBroadcasts(store, req.principal, { channelId: q.channelId, status: q.status, subject: q.subject, limit: q.limit ?? 25, offset: q.offset ?? 0 });
  });

  app.get('/broadcasts/:id', async (req): Promise<BroadcastDetail> => retrieveBroadcast(store, req.principal, broadcastId(req)));

  app.get('/broadcasts/:id/failures', { schema: { querystring: pageQuery }, attachValidation: true }, async (req): Promise<PageOf<BroadcastFailure>> =>
    listFailures(store, req.principal, broadcastId(req), page(req)),
  );

  app.get('/broadcasts/:id/suppressions', { schema: { querystring: pageQuery }, attachValidation: true }, async (req): Promise<PageOf<string>> =>
    listSuppressed(store, req.principal, broadcastId(req), page(req)),
  );

  app.post('/broadcasts/:id/cancel', async (req): Promise<BroadcastDetail> => cancel(store, req.principal, broadcastId(req)));
}
