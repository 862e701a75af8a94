/**
 * POST /activity/messages/{id}/cancel and PATCH /activity/messages/{id} {scheduledAt} (issue 34):
 * each calls one verb of activity/schedule.ts. Any key that may see the message (the account's,
 * or the message's channel key); 409 conflict once an attempt started or the message ended.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { MessageSchedule } from '../../activity/schedule.js';
import type { MessageScheduleAnswer } from '../../domain/wire.js';
import { schemaErrors } from '../query-params.js';

const rescheduleBody = {
  type: 'object',
  additionalProperties: false,
  required: ['scheduledAt'],
  properties: { scheduledAt: { type: 'string', maxLength: 64, description: 'RFC 3339 date-time with offset, at most limits.maxScheduleDays ahead' } },
} as const;

export function messageScheduleRoutes(schedule: MessageSchedule) {
  return (app: FastifyInstance): void => {
    const idOf = (req: FastifyRequest) => (req.params as { id: string }).id;

    app.post('/activity/messages/:id/cancel', async (req): Promise<MessageScheduleAnswer> => schedule.cancel(req.principal, idOf(req)));

    app.patch('/activity/messages/:id', { schema: { body: rescheduleBody }, attachValidation: true }, async (req): Promise<MessageScheduleAnswer> => {
      schemaErrors(req).throwIfAny();
      return schedule.reschedule(req.principal, idOf(req), req.body as { scheduledAt: string });
    });
  };
}
