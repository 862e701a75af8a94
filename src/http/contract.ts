/**
 * The contract of the HTTP API as the OpenAPI document states it, beyond what the route schemas
 * say: the problem body, the error responses every operation can give, the response headers, an
 * operationId and summary per operation, path ids as UUIDs and the comma-separated query lists
 * as the arrays they are. openapi.ts applies it to the document @fastify/swagger generates from
 * the route schemas (which stay the one source of request bodies and query parameters).
 *
 * Only the document is touched: nothing here validates requests or serializes answers, so the
 * answers stay exactly what the handlers return. test/support/openapi-check.ts holds every
 * answer the integration suites receive against this document; test/integration/openapi.test.ts
 * fails when a route fastify knows is missing here.
 */
import { ERROR_CATALOGUE } from '../domain/errors.js';
import { EVENT_TYPES } from '../domain/types.js';
import { MAX_BATCH_REQUESTS } from '../submission/transactional-batch.js';
import { SUCCESS_BODIES } from './response-schemas.js';
import { nullableOptionals } from './null-fields.js';
import { rotateKeyBody } from './schemas.js';
import { tagsSchema, transactionalBody } from './send-schemas.js';

/** RFC 9457 problem details with the fields of spec section 7 (problem.ts builds them). */
export const problemSchema = {
  type: 'object',
  required: ['type', 'title', 'status', 'code', 'detail', 'instance', 'requestId'],
  properties: {
    type: { type: 'string', description: '<publicUrl>/errors/<code>' },
    title: { type: 'string' },
    status: { type: 'integer', minimum: 400, maximum: 599 },
    code: { type: 'string', enum: Object.keys(ERROR_CATALOGUE) },
    detail: { type: 'string' },
    instance: { type: 'string', description: '"<METHOD> <path>" of the request' },
    requestId: { type: 'string', description: 'Also in the X-Request-Id response header' },
    errors: {
      type: 'object',
      description: 'Field errors keyed by JSON pointer into the request (body, query or header name)',
      additionalProperties: {
        type: 'array',
        items: {
          type: 'object',
          required: ['code', 'message'],
          properties: {
            code: { type: 'string' },
            message: { type: 'string' },
            line: { type: 'integer', minimum: 1, description: 'templating_error: the line of the template part the error is on, when known' },
            column: { type: 'integer', minimum: 1, description: 'templating_error: the column on that line, when known' },
          },
        },
      },
    },
    errorsOmitted: {
      type: 'integer',
      minimum: 1,
      description: 'Field errors found beyond the first 100 listed in `errors` (absent when every one is listed)',
    },
  },
} as const;

export const PROBLEM_REF = { $ref: '#/components/schemas/Problem' } as const;

const uuid = { type: 'string', format: 'uuid' } as const;

/** Response headers, referenced from every response that carries them. */
export const responseHeaders = {
  'X-Request-Id': { description: 'Identifies the request in the logs; equals `requestId` of a problem body.', schema: { type: 'string' } },
  'RateLimit-Limit': { description: 'Requests the API key may make per window.', schema: { type: 'integer' } },
  'RateLimit-Remaining': { description: 'Requests left in the current window.', schema: { type: 'integer' } },
  'RateLimit-Reset': { description: 'Seconds until the window is full again.', schema: { type: 'integer' } },
  'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer' } },
  'Cache-Control': { description: '`no-store` on every answer to an API key: it holds the account\'s data.', schema: { type: 'string' } },
  'WWW-Authenticate': { description: 'The Bearer challenge (RFC 6750).', schema: { type: 'string' } },
  'X-Total-Count-Estimated': { description: '`true` when totalCount is an estimate (the count stopped at its bound).', schema: { type: 'string', const: 'true' } },
  'X-Page-Partial': { description: '`true` when the page stopped at its scan bound before `limit` results; continue with `after`.', schema: { type: 'string', const: 'true' } },
} as const;

type HeaderName = keyof typeof responseHeaders;

/** What each error status means in this API, for the response descriptions. */
const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Malformed request: body not JSON (invalid_json), or not valid HTTP (bad_request)',
  401: 'Missing or invalid API key (unauthorized)',
  403: 'The key may not do this, or a sending rule refuses it',
  404: 'The resource, or the channel named, does not exist',
  409: 'The resource is in a state that does not allow this',
  413: 'The body exceeds http.bodyLimit (16 KiB on public routes), or has more JSON values than the cap (payload_too_large)',
  414: 'The URL is too long (uri_too_long)',
  415: 'The body is not application/json (unsupported_media_type)',
  422: 'Invalid fields (validation_failed and the spec codes); `errors` names each field by JSON pointer',
  429: 'Rate limit of the API key, or of invalid keys from one address (rate_limit_exceeded)',
  500: 'Internal error; the request id identifies it in the logs',
  503: 'The daemon is shutting down, or is receiving more request bodies at once than http.bodyBufferLimit (service_unavailable), or its PostgreSQL store cannot be reached and nothing was stored (store_unavailable), or left a call unanswered for store.requestTimeoutMs, the outcome unknown: retry with the same Idempotency-Key (store_timeout)',
  507: 'The data store is full; nothing was stored (storage_full)',
};

/** The optional body of POST /webhooks/{id}/test (webhooks/service.ts checks it). */
const webhookTestRequest = { type: 'object', additionalProperties: false, properties: { eventType: { type: 'string', enum: [...EVENT_TYPES] } } } as const;

/**
 * POST /send/transactional/batch: the route checks the list alone and the handler each entry
 * (routes/send.ts), so that a bad entry fails alone; the document says what an entry is.
 */
const batchRequest = {
  type: 'object',
  additionalProperties: false,
  required: ['requests'],
  properties: { requests: { type: 'array', minItems: 1, maxItems: MAX_BATCH_REQUESTS, items: transactionalBody } },
} as const;

/** Every request can get these: a request without Host, a URL too long, an internal error, shutdown. */
const ALWAYS = [400, 414, 500, 503];
/** Operations that need an API key. */
const AUTH = [401, 403, 429];
/** Operations that read a body (Fastify parses one on any POST, PATCH or DELETE) and write. */
const WRITE = [413, 415, 507];

interface Operation {
  operationId: string;
  summary: string;
  /** Errors beyond ALWAYS (AUTH and WRITE are added by auth and method). */
  errors?: number[];
  /** The success status; 200 unless said. */
  ok?: 200 | 204 | 302;
  /** Media type of the success body when it is not JSON. */
  media?: string;
  /** Public operation (no API key): no 401/403/429, no rate-limit headers. */
  public?: boolean;
  /** Headers of the success answer beyond X-Request-Id and RateLimit-*. */
  headers?: HeaderName[];
  /** An optional body the handler checks itself (no route schema, which would require one). */
  optionalBody?: Record<string, unknown>;
  /** The body as documented where the route schema checks less than the handler does. */
  body?: Record<string, unknown>;
}

/** operationIds follow the official SDKs' names (api-surface.md). */
export const OPERATIONS: Record<string, Operation> = {
  'GET /health': { operationId: 'ops.health', summary: 'Liveness: the process answers', public: true },
  'GET /ready': { operationId: 'ops.ready', summary: 'Readiness: store open, worker pool up, listeners bound', public: true },
  'GET /metrics': { operationId: 'ops.metrics', summary: 'Prometheus metrics (text exposition format)', public: true, errors: [401, 403], media: 'text/plain' },
  'GET /ops/sources': { operationId: 'ops.sources', summary: 'Sending IPs: each source, its pools and its reverse DNS check', public: true, errors: [401, 403] },
  'DELETE /ops/sources/{source}/shaping/{site}': { operationId: 'ops.liftShaping', summary: 'End an automatic shaping of a sending source early', public: true, errors: [401, 403, 404, 413, 415], ok: 204 },
  'GET /errors/{code}': { operationId: 'errors.retrieve', summary: 'One code of the error catalogue', public: true, errors: [404] },

  'GET /api-keys': { operationId: 'apiKeys.list', summary: "List the account's API keys (account-level key)", errors: [422] },
  'POST /api-keys': { operationId: 'apiKeys.create', summary: 'Create an API key of the account or of one channel; the secret is answered only now', errors: [404, 422] },
  'DELETE /api-keys/{id}': { operationId: 'apiKeys.revoke', summary: 'Revoke an API key of the account', errors: [404], ok: 204 },

  'POST /channels': { operationId: 'channels.create', summary: 'Create a channel', errors: [422] },
  'GET /channels': { operationId: 'channels.list', summary: 'List channels', errors: [404, 422] },
  'GET /channels/{id}': { operationId: 'channels.retrieve', summary: 'Retrieve a channel', errors: [404] },
  'PATCH /channels/{id}': { operationId: 'channels.update', summary: 'Update a channel', errors: [404, 422] },
  'DELETE /channels/{id}': { operationId: 'channels.del', summary: 'Delete a channel and everything it holds', errors: [404], ok: 204 },

  'POST /domains': { operationId: 'domains.create', summary: 'Register a sending domain', errors: [404, 422] },
  'GET /domains': { operationId: 'domains.list', summary: 'List sending domains', errors: [404, 422] },
  'GET /domains/{id}': { operationId: 'domains.retrieve', summary: 'Retrieve a sending domain with its DNS records', errors: [404] },
  'PATCH /domains/{id}': { operationId: 'domains.update', summary: 'Set the channels a domain is linked to', errors: [404, 422] },
  'DELETE /domains/{id}': { operationId: 'domains.del', summary: 'Delete a sending domain', errors: [404], ok: 204 },
  'POST /domains/{id}/verify': { operationId: 'domains.verify', summary: 'Check the DNS records now', errors: [404] },
  'POST /domains/{id}/rotate-key': { operationId: 'domains.rotateKey', summary: 'Start a DKIM key rotation', errors: [404, 422], optionalBody: rotateKeyBody },

  'POST /send/transactional': { operationId: 'sending.transactional', summary: 'Send a transactional message', errors: [404, 422] },
  'POST /send/transactional/batch': { operationId: 'sending.transactionalBatch', summary: 'Send up to 500 transactional messages', errors: [404, 422], body: batchRequest },
  'POST /send/broadcast': { operationId: 'sending.broadcast', summary: 'Send a broadcast', errors: [404, 422] },
  'POST /send/broadcast/message': { operationId: 'sending.broadcastMessage', summary: 'Send one broadcast message', errors: [404, 422] },

  'GET /broadcasts': { operationId: 'broadcasts.list', summary: 'List broadcasts of a channel', errors: [404, 422] },
  'GET /broadcasts/{id}': { operationId: 'broadcasts.retrieve', summary: 'Retrieve a broadcast', errors: [404] },
  'GET /broadcasts/{id}/failures': { operationId: 'broadcasts.listFailures', summary: 'List the entries of a broadcast that failed', errors: [404, 422] },
  'GET /broadcasts/{id}/suppressions': { operationId: 'broadcasts.listSuppressions', summary: 'List the addresses a broadcast skipped as suppressed', errors: [404, 422] },
  'POST /broadcasts/{id}/cancel': { operationId: 'broadcasts.cancel', summary: 'Cancel a broadcast', errors: [404, 409] },

  'POST /suppressions': { operationId: 'suppressions.create', summary: 'Suppress addresses', errors: [404, 422] },
  'POST /suppressions/remove': { operationId: 'suppressions.remove', summary: 'Remove addresses from the suppression list', errors: [404, 422] },
  'GET /suppressions': { operationId: 'suppressions.list', summary: 'List suppressed addresses', errors: [404, 422] },

  'GET /activity/events': { operationId: 'activity.listEvents', summary: 'List events', errors: [404, 422], headers: ['X-Total-Count-Estimated', 'X-Page-Partial'] },
  'GET /activity/messages': { operationId: 'activity.listMessages', summary: 'List messages', errors: [404, 422], headers: ['X-Total-Count-Estimated', 'X-Page-Partial'] },
  'GET /activity/messages/{id}': { operationId: 'activity.retrieveMessage', summary: 'Retrieve a message with its events', errors: [404] },
  'POST /activity/messages/{id}/cancel': { operationId: 'activity.cancelMessage', summary: 'Cancel a scheduled message, or a queued one never attempted', errors: [404, 409] },
  'PATCH /activity/messages/{id}': { operationId: 'activity.rescheduleMessage', summary: 'Move a scheduled message to another time', errors: [404, 409, 422] },

  'GET /statistics/totals': { operationId: 'statistics.retrieveTotals', summary: 'Statistics totals', errors: [404, 422] },
  'GET /statistics/daily': { operationId: 'statistics.retrieveDaily', summary: 'Statistics per day', errors: [404, 422] },
  'GET /statistics/hourly': { operationId: 'statistics.retrieveHourly', summary: 'Statistics per hour', errors: [404, 422] },
  'GET /activity/statistics/totals': { operationId: 'activity.statistics.retrieveTotals', summary: 'Statistics totals (SDK path)', errors: [404, 422] },
  'GET /activity/statistics/daily': { operationId: 'activity.statistics.retrieveDaily', summary: 'Statistics per day (SDK path)', errors: [404, 422] },
  'GET /activity/statistics/hourly': { operationId: 'activity.statistics.retrieveHourly', summary: 'Statistics per hour (SDK path)', errors: [404, 422] },

  'POST /webhooks': { operationId: 'webhooks.create', summary: 'Create a webhook', errors: [404, 422] },
  'GET /webhooks': { operationId: 'webhooks.list', summary: 'List webhooks', errors: [404, 422] },
  'GET /webhooks/{id}': { operationId: 'webhooks.retrieve', summary: 'Retrieve a webhook', errors: [404] },
  'PATCH /webhooks/{id}': { operationId: 'webhooks.update', summary: 'Update a webhook', errors: [404, 422] },
  'DELETE /webhooks/{id}': { operationId: 'webhooks.del', summary: 'Delete a webhook', errors: [404], ok: 204 },
  'POST /webhooks/{id}/regenerate-signing-key': { operationId: 'webhooks.regenerateSigningKey', summary: 'Replace the payload signing key', errors: [404] },
  'POST /webhooks/{id}/test': { operationId: 'webhooks.test', summary: 'Send a test event to the endpoint now and answer what it got', errors: [404, 422], optionalBody: webhookTestRequest },

  'POST /inbound/routes': { operationId: 'inbound.routes.create', summary: 'Create an inbound route: mail to an address of a domain of the account, POSTed to a URL', errors: [404, 422] },
  'GET /inbound/routes': { operationId: 'inbound.routes.list', summary: 'List inbound routes', errors: [404, 422] },
  'GET /inbound/routes/{id}': { operationId: 'inbound.routes.retrieve', summary: 'Retrieve an inbound route', errors: [404] },
  'PATCH /inbound/routes/{id}': { operationId: 'inbound.routes.update', summary: 'Update an inbound route', errors: [404, 422] },
  'DELETE /inbound/routes/{id}': { operationId: 'inbound.routes.del', summary: 'Delete an inbound route', errors: [404], ok: 204 },
  'POST /inbound/routes/{id}/regenerate-signing-key': { operationId: 'inbound.routes.regenerateSigningKey', summary: 'Replace the payload signing key of an inbound route', errors: [404] },
  'POST /templates': { operationId: 'templates.create', summary: 'Store a template: version 1, active', errors: [404, 422] },
  'GET /templates': { operationId: 'templates.list', summary: 'List stored templates', errors: [404, 422] },
  'GET /templates/{idOrAlias}': { operationId: 'templates.retrieve', summary: 'Retrieve a template with its active version (or ?version=N)', errors: [404, 422] },
  'PATCH /templates/{idOrAlias}': { operationId: 'templates.update', summary: 'Update a template; new content becomes a new active version', errors: [404, 422] },
  'DELETE /templates/{idOrAlias}': { operationId: 'templates.del', summary: 'Delete a template with its versions', errors: [404], ok: 204 },
  'GET /templates/{idOrAlias}/versions': { operationId: 'templates.listVersions', summary: 'List the versions of a template, oldest first', errors: [404] },
  'POST /templates/{idOrAlias}/activate': { operationId: 'templates.activate', summary: 'Make a stored version the active one', errors: [404, 422] },
  'POST /templates/{idOrAlias}/render': { operationId: 'templates.render', summary: 'Render a version with data (templating_error with line and column)', errors: [404, 422] },
  'POST /templates/render': { operationId: 'templates.renderDraft', summary: 'Render content that is not stored (an unsaved edit) with data, as a version renders', errors: [422] },
  'GET /inbound/messages': { operationId: 'inbound.messages.list', summary: 'List received messages, newest first', errors: [404, 422] },
  'GET /inbound/statistics/daily': { operationId: 'inbound.statistics.retrieveDaily', summary: 'Received messages per UTC day', errors: [404, 422] },
  'GET /inbound/messages/{id}': { operationId: 'inbound.messages.retrieve', summary: 'Retrieve a received message with its POST attempts and verdicts', errors: [404] },
  'GET /inbound/messages/{id}/raw': { operationId: 'inbound.messages.raw', summary: 'The received message as it arrived', errors: [404], media: 'message/rfc822' },
  'POST /inbound/messages/{id}/retry': { operationId: 'inbound.messages.retry', summary: 'POST a failed received message again', errors: [404, 409] },
  'GET /inbound/messages/{id}/attachments/{index}': { operationId: 'inbound.messages.attachment', summary: "An attachment of a received message (the payload's url), with the type its sender gave", errors: [404], media: '*/*' },

  'GET /queue': { operationId: 'queue.listDestinations', summary: 'Messages waiting per destination (recipient domain)', errors: [422] },
  'GET /queue/messages': { operationId: 'queue.listMessages', summary: 'List queued messages', errors: [422], headers: ['X-Page-Partial'] },
  'POST /queue/messages/{id}/retry': { operationId: 'queue.retryMessage', summary: 'Make a queued message due now', errors: [404, 409, 422] },
  'DELETE /queue/messages/{id}': { operationId: 'queue.dropMessage', summary: 'Drop a queued message: its recipients get a bounced event', errors: [404, 409, 422] },

  'POST /dashboard/session': { operationId: 'dashboard.login', summary: 'Sign in to the dashboard with an account-level API key', public: true, errors: [401, 403, 413, 415, 422, 429] },
  'GET /dashboard/session': { operationId: 'dashboard.session', summary: 'The dashboard session of the cookie, or null', public: true },
  'DELETE /dashboard/session': { operationId: 'dashboard.logout', summary: 'Sign out of the dashboard', public: true, errors: [401, 413, 415, 422], ok: 204 },

  'GET /t/open': { operationId: 'tracking.open', summary: 'Open-tracking pixel', public: true, errors: [404, 507], media: 'image/gif' },
  'GET /t/click': { operationId: 'tracking.click', summary: 'Click-tracking redirect', public: true, errors: [404, 507], ok: 302 },
  'GET /unsubscribe': { operationId: 'unsubscribe.page', summary: 'Unsubscribe confirmation page', public: true, errors: [404], media: 'text/html' },
  'POST /unsubscribe': { operationId: 'unsubscribe.oneClick', summary: 'One-click unsubscribe (RFC 8058)', public: true, errors: [404, 413, 422], media: 'text/html' },
  'POST /unsubscribe/resubscribe': { operationId: 'unsubscribe.resubscribe', summary: 'Undo an unsubscribe', public: true, errors: [404, 413, 422], media: 'text/html' },
};

/** The error statuses an operation documents. */
export function errorStatuses(method: string, path: string, op: Operation): number[] {
  const write = method !== 'GET' && !op.public ? WRITE : [];
  const auth = op.public ? [] : AUTH;
  // A path id that is not a UUID is 422 on /id (client-compat.ts).
  const id = path.includes('{id}') ? [422] : [];
  return [...new Set([...ALWAYS, ...auth, ...write, ...id, ...(op.errors ?? [])])].sort((a, b) => a - b);
}

function headerRefs(names: HeaderName[]): Record<string, { $ref: string }> {
  return Object.fromEntries(names.map((n) => [n, { $ref: `#/components/headers/${n}` }]));
}

function errorResponse(status: number, op: Operation) {
  const names: HeaderName[] = ['X-Request-Id'];
  // Rate-limit headers come with every answer after the key was accepted.
  if (!op.public && status !== 401) names.push('RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'Cache-Control');
  if (status === 429 || status === 503) names.push('Retry-After');
  if (status === 401) names.push('WWW-Authenticate');
  return { description: ERROR_DESCRIPTIONS[status], headers: headerRefs(names), content: { 'application/problem+json': { schema: PROBLEM_REF } } };
}

/** Comma-separated query lists (spec section 4), documented as the arrays they are. */
const LIST_PARAMETERS: Record<string, Record<string, unknown>> = {
  channelIds: { type: 'array', items: uuid },
  eventTypes: { type: 'array', items: { type: 'string', enum: [...EVENT_TYPES] } },
  tags: { type: 'array', maxItems: tagsSchema.maxItems, items: tagsSchema.items },
};

/** Query parameters that name a resource by id. */
const ID_PARAMETERS = new Set(['channelId', 'messageId']);

type Json = Record<string, any>;

function applyParameters(op: Json): void {
  for (const p of (op.parameters ?? []) as Json[]) {
    if (p.in === 'path' && p.name === 'id') p.schema = { ...p.schema, ...uuid };
    if (p.in === 'path' && p.name === 'idOrAlias') p.schema = { type: 'string', minLength: 1, maxLength: 100, description: "The template's id or its alias" };
    if (p.in === 'path' && p.name === 'index') p.schema = { type: 'integer', minimum: 0 };
    if (p.in === 'path' && p.name === 'code') p.schema = { type: 'string', enum: Object.keys(ERROR_CATALOGUE) };
    if (p.in === 'query' && ID_PARAMETERS.has(p.name)) p.schema = { ...p.schema, ...uuid };
    if (p.in === 'query' && LIST_PARAMETERS[p.name]) {
      p.schema = LIST_PARAMETERS[p.name];
      p.style = 'form';
      p.explode = false;
    }
  }
}

function applyResponses(method: string, path: string, op: Json, contract: Operation, body: Json | undefined): void {
  const generated = (op.responses ?? {}) as Json;
  const ok = contract.ok ?? 200;
  const success: Json = generated[ok] && generated[ok].description !== 'Default Response' ? generated[ok] : { description: 'Success' };
  if (body) success.content = { 'application/json': { schema: body } };
  if (ok === 200 && !success.content) {
    success.content = { [contract.media ?? 'application/json']: contract.media ? { schema: { type: 'string' } } : {} };
  }
  const names: HeaderName[] = contract.public ? ['X-Request-Id'] : ['X-Request-Id', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'Cache-Control'];
  names.push(...(contract.headers ?? []));
  success.headers = { ...headerRefs(names), ...(ok === 302 ? { Location: { description: 'The link target', schema: { type: 'string' } } } : {}) };
  const responses: Json = { [ok]: success };
  // Statuses the route schema declares besides (GET /ready's 503) keep their body.
  for (const [status, r] of Object.entries(generated)) {
    if (status !== String(ok) && status !== '200') responses[status] = { ...(r as Json), headers: headerRefs(['X-Request-Id']) };
  }
  for (const status of errorStatuses(method, path, contract)) responses[status] ??= errorResponse(status, contract);
  op.responses = responses;
}

/** Applies the contract to the document @fastify/swagger generated (transformObject). */
export function applyContract(doc: Json): Json {
  doc.components = { ...doc.components, schemas: { ...doc.components?.schemas, Problem: problemSchema }, headers: responseHeaders };
  for (const [path, item] of Object.entries<Json>(doc.paths ?? {})) {
    for (const [method, op] of Object.entries<Json>(item)) {
      const key = `${method.toUpperCase()} ${path}`;
      const contract = OPERATIONS[key];
      if (!contract) continue; // the route-walk test names it
      op.operationId = contract.operationId;
      op.summary ??= contract.summary;
      applyParameters(op);
      if (contract.optionalBody) op.requestBody ??= { required: false, content: { 'application/json': { schema: contract.optionalBody } } };
      if (contract.body) op.requestBody = { required: true, content: { 'application/json': { schema: contract.body } } };
      const body = op.requestBody?.content?.['application/json'];
      // null for an optional field is its absence (null-fields.ts): the document says it may be sent.
      if (body?.schema) body.schema = nullableOptionals(body.schema);
      applyResponses(method.toUpperCase(), path, op, contract, SUCCESS_BODIES[key]);
    }
  }
  return doc;
}
