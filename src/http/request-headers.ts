/**
 * The request headers of the send routes under every name a client sends them (api-surface.md,
 * "Request headers"): the official SDKs send X-Helo-Channel-Id and X-Helo-Idempotency-Key, the
 * specification names X-Service-Channel-Id, DESIGN.md chose Idempotency-Key. This is the one
 * place that knows the aliases: every route that reads these headers calls channelHeaderName()
 * and idempotencyHeaderName() (or channelHeader() and idempotencyKey() for the value alone), and
 * declares sendHeadersSchema so the OpenAPI document lists them. The name a value came under goes
 * along with it (submission/sender-headers.ts), so every error about the value names the header
 * as the client sent it.
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

/** A header's value as sent: the first of a repeated one; an empty one is none (clients that send every header they know, set or not). */
export function headerValue(req: FastifyRequest, name: string): string | undefined {
  const raw = req.headers[LOWER[name] ?? name.toLowerCase()];
  const value = Array.isArray(raw) ? raw[0] : raw;
  return value !== undefined && value.trim() !== '' ? value : undefined;
}

/**
 * The name, of `names`, the request carries the header under (the first sent, in the order of
 * `names`), or undefined; 422 when the names carry different values. The name is one of the
 * constants above, so an error about the value can name the header as the client sent it at no
 * cost: nothing is allocated unless the names disagree.
 */
function sentName<N extends string>(req: FastifyRequest, names: readonly N[], same: (a: string, b: string) => boolean): N | undefined {
  let first: N | undefined;
  let firstValue = '';
  for (const name of names) {
    const value = headerValue(req, name);
    if (value === undefined) continue;
    if (first === undefined) {
      first = name;
      firstValue = value;
    } else if (!same(value, firstValue)) {
      throw disagreement(req, names, first, same);
    }
  }
  return first;
}

/** The 422 of names that carry different values: a pointer per name that differs from the first one sent. */
function disagreement(req: FastifyRequest, names: readonly string[], first: string, same: (a: string, b: string) => boolean): AppError {
  const firstValue = headerValue(req, first)!;
  const differing = names.filter((name) => name !== first && headerValue(req, name) !== undefined && !same(headerValue(req, name)!, firstValue));
  const errors: FieldErrors = {};
  for (const name of differing) errors[`/${name}`] = [{ code: 'conflict', message: `differs from ${first}; send one value under one name` }];
  return new AppError('validation_failed', `${[first, ...differing].join(' and ')} carry different values`, { errors });
}

const sameString = (a: string, b: string) => a === b;
// One channel id in upper and in lower case is one channel (UUIDs compare case-insensitively, RFC 9562 4).
const sameChannel = (a: string, b: string) => a.trim().toLowerCase() === b.trim().toLowerCase();

/** The name the channel came under, X-Service-Channel-Id or X-Helo-Channel-Id (undefined: none); 422 on that name when it is not a UUID. */
export function channelHeaderName(req: FastifyRequest): (typeof CHANNEL_HEADERS)[number] | undefined {
  const name = sentName(req, CHANNEL_HEADERS, sameChannel);
  if (name !== undefined && !isUuid(headerValue(req, name)!.trim())) {
    throw new AppError('validation_failed', `${name} is not a channel id`, { errors: { [`/${name}`]: [{ code: 'invalid_format', message: 'must be a UUID' }] } });
  }
  return name;
}

/** The channel the request names in X-Service-Channel-Id or X-Helo-Channel-Id; 422 on that header when it is not a UUID. */
export function channelHeader(req: FastifyRequest): string | undefined {
  const name = channelHeaderName(req);
  return name && headerValue(req, name);
}

/** The name the idempotency key came under, of its three (undefined: none); 422 on that name when the key is malformed. */
export function idempotencyHeaderName(req: FastifyRequest): (typeof IDEMPOTENCY_HEADERS)[number] | undefined {
  const name = sentName(req, IDEMPOTENCY_HEADERS, sameString);
  if (name !== undefined) checkIdempotencyKey(headerValue(req, name), name);
  return name;
}

/** The checked idempotency key under any of its three names. */
export function idempotencyKey(req: FastifyRequest): string | undefined {
  const name = idempotencyHeaderName(req);
  return name && headerValue(req, name);
}
