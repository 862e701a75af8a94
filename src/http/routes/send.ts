/**
 * The send routes: POST /send/transactional (spec 4.10), /send/broadcast (spec 4.11), and what
 * the SDKs call besides (api-surface.md): /send/transactional/batch and /send/broadcast/message.
 * Channel and idempotency headers are read under all their names by request-headers.ts.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { FieldErrorList } from '../../domain/errors.js';
import type { Submission } from '../../submission/submission.js';
import type { SenderHeaders } from '../../submission/sender-headers.js';
import type { TransactionalBody } from '../../submission/transactional.js';
import type { BroadcastBody } from '../../submission/broadcast.js';
import { MAX_BATCH_REQUESTS, type BatchEntryInput } from '../../submission/transactional-batch.js';
import { fieldErrorsFromAjv, type AjvErrorLike } from '../problem.js';
import { channelHeaderName, headerValue, idempotencyHeaderName, sendHeadersSchema } from '../request-headers.js';
import { broadcastBody, transactionalBody } from '../send-schemas.js';
import { addAddressErrors, throwSendSchemaErrors } from '../send-validation.js';
import type { HttpContext } from '../server.js';

/**
 * Only the top level is validated by the route: the list itself, 1 to 500 entries (an empty or
 * longer list is a 422 on /requests). Each entry is validated on its own in the handler so one
 * bad entry becomes that entry's failed answer instead of a 422 for the whole batch.
 */
const batchBody = {
  type: 'object',
  additionalProperties: false,
  required: ['requests'],
  properties: {
    requests: {
      type: 'array',
      minItems: 1,
      maxItems: MAX_BATCH_REQUESTS,
      items: { description: 'A SendMessageRequest, the body of POST /send/transactional; validated per entry.' },
    },
  },
} as const;

/** The sender headers of a send request, resolved once (aliases, key format), each with the name it came under for the errors about it. */
function senderOf(req: FastifyRequest): SenderHeaders {
  const channel = channelHeaderName(req);
  const idempotency = idempotencyHeaderName(req);
  return {
    principal: req.principal,
    channelHeader: channel && headerValue(req, channel),
    channelHeaderName: channel,
    idempotencyKey: idempotency && headerValue(req, idempotency),
    idempotencyHeader: idempotency,
  };
}

/**
 * One batch entry checked against the transactional body schema, with the server's strict Ajv;
 * a failed entry gets the address errors beside the schema's, as the single send route does.
 */
function parseEntry(req: FastifyRequest, body: unknown): BatchEntryInput {
  const validate = req.compileValidationSchema(transactionalBody, 'body');
  if (validate(body)) return { valid: true, body: body as TransactionalBody };
  const errors = new FieldErrorList();
  for (const [pointer, list] of Object.entries(fieldErrorsFromAjv((validate.errors ?? []) as unknown as AjvErrorLike[]))) for (const e of list) errors.add(pointer, e.code, e.message);
  addAddressErrors(body, errors);
  return { valid: false, body, errors: errors.toJSON() };
}

export function sendRoutes(submission: Submission) {
  /** The sender domain's field error for a body that failed its schema (one 422 names both). */
  const senderErrors = (req: FastifyRequest) => (from: unknown, header: string | undefined, errors: FieldErrorList) =>
    submission.addSenderFieldError({ principal: req.principal, channelHeader: header, from }, errors);
  return (app: FastifyInstance, { config }: HttpContext): void => {
    app.post('/send/transactional', { schema: { headers: sendHeadersSchema, body: transactionalBody }, attachValidation: true }, async (req) => {
      await throwSendSchemaErrors(req, senderErrors(req));
      return submission.transactional({ ...senderOf(req), body: req.body as TransactionalBody });
    });

    app.post('/send/transactional/batch', { schema: { headers: sendHeadersSchema, body: batchBody } }, async (req) => {
      const { requests } = req.body as { requests: unknown[] };
      return submission.transactionalBatch({ ...senderOf(req), requests: requests.map((r) => parseEntry(req, r)) });
    });

    app.post('/send/broadcast', { schema: { headers: sendHeadersSchema, body: broadcastBody(config.limits.broadcastMessages) }, attachValidation: true }, async (req) => {
      await throwSendSchemaErrors(req, senderErrors(req), { entries: true });
      return submission.broadcast({ ...senderOf(req), body: req.body as BroadcastBody });
    });

    app.post('/send/broadcast/message', { schema: { headers: sendHeadersSchema, body: transactionalBody }, attachValidation: true }, async (req) => {
      await throwSendSchemaErrors(req, senderErrors(req));
      return submission.broadcastMessage({ ...senderOf(req), body: req.body as TransactionalBody });
    });
  };
}
