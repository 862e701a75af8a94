/** POST /send/transactional and /send/broadcast: spec 4.10, 4.11. */
import type { FastifyInstance } from 'fastify';
import type { Submission } from '../../submission/submission.js';
import { checkIdempotencyKey } from '../../submission/idempotency.js';
import type { TransactionalBody } from '../../submission/transactional.js';
import type { BroadcastBody } from '../../submission/broadcast.js';
import { broadcastBody, transactionalBody } from '../send-schemas.js';
import type { HttpContext } from '../server.js';

function headerValue(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

export function sendRoutes(submission: Submission) {
  return (app: FastifyInstance, { config }: HttpContext): void => {
    app.post('/send/transactional', { schema: { body: transactionalBody } }, async (req) => {
      return submission.transactional({
        principal: req.principal,
        channelHeader: headerValue(req.headers['x-service-channel-id']),
        idempotencyKey: checkIdempotencyKey(headerValue(req.headers['idempotency-key'])),
        body: req.body as TransactionalBody,
      });
    });

    app.post('/send/broadcast', { schema: { body: broadcastBody(config.limits.broadcastMessages) } }, async (req) => {
      return submission.broadcast({
        principal: req.principal,
        channelHeader: headerValue(req.headers['x-service-channel-id']),
        idempotencyKey: checkIdempotencyKey(headerValue(req.headers['idempotency-key'])),
        body: req.body as BroadcastBody,
      });
    });
  };
}
