/**
 * What common HTTP clients do that must work (issue 18): an unknown method on a known path is
 * 405 with `Allow` (not 404), query parameters a route does not know (cache-busters like
 * `?_=123`) are dropped and logged at debug level, and a URL longer than MAX_URL_LENGTH is a 414
 * problem, answered after authentication (Node's header limit is raised above it in server.ts so
 * that such a request reaches Fastify at all). A path id that is not a UUID is 422 on `/id`: it
 * is a mistake in the request, not a resource that does not exist.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../domain/errors.js';
import { MAX_URL_LENGTH } from '../domain/request-target.js';
import { trimEndOf } from '../domain/trim-end.js';
import { isUuid } from '../domain/uuid.js';

export { MAX_URL_LENGTH } from '../domain/request-target.js';

/** Node's limit on the request line plus headers: above MAX_URL_LENGTH, so a long URL is a 414, not a parser error. */
export const MAX_HEADER_BYTES = 64 * 1024;

interface RoutePattern {
  re: RegExp;
  methods: Set<string>;
}

function patternOf(url: string): RegExp {
  const body = trimEndOf(url, '/')
    .split('/')
    .map((seg) => (seg.startsWith(':') ? '[^/]+' : seg === '*' ? '.*' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/');
  return new RegExp(`^${body}/?$`);
}

/** The compressions of the HTTP Content Coding Registry (RFC 9110 8.4.1, RFC 8878 for zstd). */
const COMPRESSIONS = new Set(['gzip', 'x-gzip', 'deflate', 'compress', 'x-compress', 'br', 'zstd']);

/**
 * A body under a compression (Content-Encoding: gzip, as some HTTP stacks compress requests) is
 * not decoded: 415 with `Accept-Encoding: identity` (RFC 9110 8.4.1, 12.5.3), rather than a JSON
 * error about its compressed bytes. Other values (`identity`, or a charset some clients put there
 * by mistake) are ignored as before, and so are an empty body, the public routes (a mailbox
 * provider's one-click unsubscribe POST must never fail on its body) and an unknown path (its 404
 * comes first).
 */
async function refuseContentCoding(req: FastifyRequest): Promise<void> {
  if (req.is404 || req.routeOptions.config?.public) return;
  const h = req.raw.headers;
  const codings = (h['content-encoding'] ?? '').split(',').map((c) => c.trim().toLowerCase());
  const empty = h['transfer-encoding'] === undefined && (h['content-length'] === undefined || h['content-length'] === '0');
  if (empty || !codings.some((c) => COMPRESSIONS.has(c))) return;
  throw new AppError('unsupported_media_type', `Content-Encoding ${h['content-encoding']} is not supported; send the body uncompressed`, {
    headers: { 'accept-encoding': 'identity' },
  });
}

/**
 * Registers the hooks. Call after the authentication hook (onRequest hooks run in order) and
 * before the first route (the onRoute hook learns the paths and their methods).
 */
export function registerClientCompat(app: FastifyInstance): { allowedMethods(req: FastifyRequest): string[] } {
  const routes = new Map<string, RoutePattern>();
  app.addHook('onRoute', (route) => {
    const entry = routes.get(route.url) ?? { re: patternOf(route.url), methods: new Set<string>() };
    for (const m of [route.method].flat()) entry.methods.add(m);
    if (entry.methods.has('GET')) entry.methods.add('HEAD');
    routes.set(route.url, entry);
  });

  app.addHook('onRequest', async (req) => {
    if (req.url.length > MAX_URL_LENGTH) throw new AppError('uri_too_long', `The request URL is longer than ${MAX_URL_LENGTH} characters`);
  });

  // A request without content has no media type to refuse (415 is for content in a format not
  // supported, RFC 9110 15.5.16), yet tools label empty bodies: curl -d '' sends a form type,
  // .NET's StringContent("") text/plain. Such a request is read as if it had no Content-Type,
  // before Fastify looks for a parser. An empty application/json body keeps json-body.ts's rules.
  // Without Content-Length and Transfer-Encoding a request has no content (RFC 9112 6.3).
  app.addHook('onRequest', async (req) => {
    const h = req.raw.headers;
    const type = h['content-type'];
    const empty = h['transfer-encoding'] === undefined && (h['content-length'] === undefined || h['content-length'] === '0');
    if (type === undefined || !empty) return;
    if (type.split(';')[0]!.trim().toLowerCase() !== 'application/json') delete h['content-type'];
  });
  app.addHook('onRequest', refuseContentCoding);

  app.addHook('preValidation', async (req) => {
    const id = (req.params as { id?: unknown } | undefined)?.id;
    if (typeof id === 'string' && !isUuid(id)) {
      throw new AppError('validation_failed', 'The id in the path is not a UUID', { errors: { '/id': [{ code: 'invalid_format', message: 'must be a UUID' }] } });
    }
  });

  app.addHook('preValidation', async (req) => {
    const schema = req.routeOptions.schema?.querystring as { properties?: Record<string, unknown>; additionalProperties?: unknown } | undefined;
    const query = req.query as Record<string, unknown> | undefined;
    if (!schema?.properties || schema.additionalProperties !== false || !query) return;
    const ignored = Object.keys(query).filter((k) => !Object.prototype.hasOwnProperty.call(schema.properties, k));
    if (ignored.length === 0) return;
    for (const k of ignored) delete query[k];
    req.log.debug({ ignored }, 'unknown query parameters ignored');
  });

  return {
    allowedMethods(req) {
      // Doubled slashes as the router reads them (server.ts ignoreDuplicateSlashes).
      const path = req.url.split('?')[0]!.replace(/\/{2,}/g, '/');
      const methods = new Set<string>();
      for (const r of routes.values()) if (r.re.test(path)) for (const m of r.methods) methods.add(m);
      return [...methods].sort();
    },
  };
}
