/** /suppressions: POST add and remove (spec 4.12), GET list (api-surface suppressions.list). */
import type { FastifyInstance } from 'fastify';
import type { MailType, Principal, SuppressionReason } from '../../domain/types.js';
import { changeSuppressions, listSuppressionPage, type SuppressionChange } from '../../suppressions/service.js';
import { pagingProperties } from '../schemas.js';
import type { HttpContext } from '../server.js';
import type { Page, Suppression, SuppressionChanges } from '../../domain/wire.js';

const mailTypeSchema = { type: 'string', enum: ['transactional', 'broadcast'] } as const;

const body = {
  type: 'object',
  additionalProperties: false,
  required: ['channelId', 'mailType', 'emails'],
  properties: {
    channelId: { type: 'string', maxLength: 64 },
    mailType: mailTypeSchema,
    emails: { type: 'array', minItems: 1, maxItems: 500, items: { type: 'string', maxLength: 320 } },
  },
} as const;

const listQuery = {
  type: 'object',
  additionalProperties: false,
  required: ['channelId', 'mailType'],
  properties: {
    ...pagingProperties,
    channelId: { type: 'string', maxLength: 64 },
    mailType: mailTypeSchema,
    reason: { type: 'string', enum: ['bounce', 'complaint', 'unsubscribe', 'manual'] },
    email: { type: 'string', maxLength: 320 },
  },
} as const;

interface ListQuery {
  channelId: string;
  mailType: MailType;
  reason?: SuppressionReason;
  email?: string;
  limit?: number;
  offset?: number;
}

export function suppressionRoutes(app: FastifyInstance, { store }: HttpContext): void {
  const change = (mode: 'add' | 'remove') => async (req: { body: unknown; principal: Principal }): Promise<SuppressionChanges> => {
    return { results: await changeSuppressions(store, req.principal, mode, req.body as SuppressionChange) };
  };
  app.post('/suppressions', { schema: { body } }, change('add'));
  app.post('/suppressions/remove', { schema: { body } }, change('remove'));

  app.get('/suppressions', { schema: { querystring: listQuery } }, async (req): Promise<Page<Suppression>> => {
    const q = req.query as ListQuery;
    return listSuppressionPage(store, req.principal, { ...q, limit: q.limit ?? 25, offset: q.offset ?? 0 });
  });
}
