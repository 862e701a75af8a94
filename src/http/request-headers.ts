/**
 * The request headers of the send routes under every name a client sends them (api-surface.md,
 * "Request headers"): the official SDKs send X-Helo-Channel-Id and X-Helo-Idempotency-Key, the
 * specification names X-Service-Channel-Id, DESIGN.md chose Idempotency-Key. This is the one
 * place that knows the aliases: every route that reads these headers calls channelHeader() and
 * idempotencyKey(), and declares sendHeadersSchema so the OpenAPI document lists them.
 *
 * Aliases that disagree are refused (422 validation_failed, one pointer per differing alias)
 * rather than one silently winning: a request naming two channels, or carrying two keys, comes
 * from a client that is confused about what it sends, and guessing could send through the
 * wrong channel or deduplicate the wrong request.
 */
import type { FastifyRequest } from 'fastify';
import { AppError, type FieldErrors } from '../domain/errors.js';
import { checkIdempotencyKey } from '../submission/idempotency.js';
import { isUuid } from '../domain/uuid.js';

/** Canonical name first: it names the pointer of a bad value and leads the conflict message. */
export const CHANNEL_HEADERS = ['X-Service-Channel-Id', 'X-Helo-Channel-Id'] as const;
export const IDEMPOTENCY_HEADERS = ['Idempotency-Key', 'X-Service-Idempotency-Key', 'X-Helo-Idempotency-Key'] as const;

/** Node's names of the headers (lower case), made once rather than per request. */
const LOWER: Record<string, string> = Object.fromEntries([...CHANNEL_HEADERS, ...IDEMPOTENCY_HEADERS].map((n) => [n, n.toLowerCase()]));

/**
 * Route `schema.headers` of the send routes. Documentation only (no constraints): the values
 * are checked below, so that a bad header is reported with its own pointer and message, and
 * the body's errors are not hidden behind a header error (Fastify stops at the first failing part).
 */
export const sendHeadersSchema = {
  type: 'object',
  properties: {
    'x-service-channel-id': { type: 'string', description: 'The channel to send through; required with an account-level API key.' },
    'x-helo-channel-id': { type: 'string', description: 'Same as X-Service-Channel-Id (the name the official SDKs send); must agree with it when both are sent.' },
    'idempotency-key': {
      type: 'string',
      description: '1 to 256 visible ASCII characters; a retry with the same key and body within one hour replays the first answer and sends nothing.',
    },
    'x-service-idempotency-key': { type: 'string', description: 'Same as Idempotency-Key; must agree with it when both are sent.' },
    'x-helo-idempotency-key': { type: 'string', description: 'Same as Idempotency-Key (the name the official SDKs send); must agree with it when both are sent.' },
  },
} as const;

/** The single value sent under any of `names`, or undefined; 422 when the aliases disagree. */
function aliased(req: FastifyRequest, names: readonly string[], same = (a: string, b: string) => a === b): { value: string; name: string } | undefined {
  const present: { name: string; value: string }[] = [];
  for (const name of names) {
    const raw = req.headers[LOWER[name] ?? name.toLowerCase()];
    const value = Array.isArray(raw) ? raw[0] : raw;
    // An empty header is no header (clients that send every header they know, set or not).
    if (value !== undefined && value.trim() !== '') present.push({ name, value });
  }
  if (present.length === 0) return undefined;
  const [first, ...rest] = present;
  const differing = rest.filter((p) => !same(p.value, first.value));
  if (differing.length > 0) {
    const errors: FieldErrors = {};
    for (const d of differing) errors[`/${d.name}`] = [{ code: 'conflict', message: `differs from ${first.name}; send one value under one name` }];
    throw new AppError('validation_failed', `${[first, ...differing].map((p) => p.name).join(' and ')} carry different values`, { errors });
  }
  return first;
}

/** The channel the request names in X-Service-Channel-Id or X-Helo-Channel-Id; 422 on that header when it is not a UUID. */
export function channelHeader(req: FastifyRequest): string | undefined {
  // One channel id in upper and in lower case is one channel (UUIDs compare case-insensitively, RFC 9562 4).
  const found = aliased(req, CHANNEL_HEADERS, (a, b) => a.trim().toLowerCase() === b.trim().toLowerCase());
  if (found && found.value.trim() !== '' && !isUuid(found.value.trim())) {
    throw new AppError('validation_failed', `${found.name} is not a channel id`, { errors: { [`/${found.name}`]: [{ code: 'invalid_format', message: 'must be a UUID' }] } });
  }
  return found?.value;
}

/** The checked idempotency key under any of its three names. */
export function idempotencyKey(req: FastifyRequest): string | undefined {
  const found = aliased(req, IDEMPOTENCY_HEADERS);
  return found && checkIdempotencyKey(found.value, found.name);
}
