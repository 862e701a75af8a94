/**
 * /queue: the account's part of the delivery queue (queue/account-queue.ts), what `postrider
 * queue` shows the operator for the whole daemon. Any key reads (a channel key its channel's
 * messages); retry and drop need an account-level key. Another account's message is 403, an
 * unknown one 404 not_found; a message with nothing waiting is 409 conflict.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { normalizeDomainName } from '../../domain/domain-name.js';
import type { FieldErrorList } from '../../domain/errors.js';
import type { AccountQueue } from '../../queue/account-queue.js';
import { schemaErrors } from '../query-params.js';
import type { QueueMessage, QueueMessagePage, QueueSummary } from '../../domain/wire.js';

const destinationSchema = { type: 'string', minLength: 1, maxLength: 255 } as const;

const summaryQuery = {
  type: 'object',
  additionalProperties: false,
  properties: { limit: { type: 'integer', minimum: 1, maximum: 500 } },
} as const;

const messagesQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    destination: destinationSchema,
    limit: { type: 'integer', minimum: 1, maximum: 500 },
    after: { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER },
  },
} as const;

const writeQuery = { type: 'object', additionalProperties: false, properties: { destination: destinationSchema } } as const;

/** A recipient domain as delivery keys its jobs: lowercase A-label, no root dot. */
function destinationOf(raw: unknown, errors: FieldErrorList): string | undefined {
  if (typeof raw !== 'string') return undefined;
  const d = normalizeDomainName(raw, []);
  if (d.ok) return d.name;
  errors.add('/destination', d.code, d.message);
  return undefined;
}

/** The query after schema and domain checks, all reported together (422). */
function parsedQuery<Q extends object>(req: FastifyRequest): Q & { destination?: string } {
  const q = req.query as Q & { destination?: unknown };
  const errors = schemaErrors(req);
  const destination = destinationOf(q.destination, errors);
  errors.throwIfAny('The query has invalid parameters');
  return { ...q, destination };
}

export function queueRoutes(queue: AccountQueue) {
  return (app: FastifyInstance): void => {
    const idOf = (req: FastifyRequest) => (req.params as { id: string }).id;

    app.get('/queue', { schema: { querystring: summaryQuery }, attachValidation: true }, async (req): Promise<QueueSummary> => {
      const q = parsedQuery<{ limit?: number }>(req);
      return queue.destinations(req.principal, { limit: q.limit ?? 100 });
    });

    app.get('/queue/messages', { schema: { querystring: messagesQuery }, attachValidation: true }, async (req, reply): Promise<QueueMessagePage> => {
      const q = parsedQuery<{ limit?: number; after?: number }>(req);
      const page = await queue.messages(req.principal, { destination: q.destination, limit: q.limit ?? 100, afterSeq: q.after ?? 0 });
      if (page.partial) reply.header('x-page-partial', 'true');
      return { results: page.results, after: page.after };
    });

    app.post('/queue/messages/:id/retry', { schema: { querystring: writeQuery }, attachValidation: true }, async (req): Promise<QueueMessage> => {
      const q = parsedQuery<object>(req);
      return queue.retry(req.principal, idOf(req), q.destination);
    });

    app.delete('/queue/messages/:id', { schema: { querystring: writeQuery }, attachValidation: true }, async (req): Promise<QueueMessage> => {
      const q = parsedQuery<object>(req);
      return queue.drop(req.principal, idOf(req), q.destination);
    });
  };
}
