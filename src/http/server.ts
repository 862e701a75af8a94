/**
 * The HTTP adapter: Fastify with strict request validation, bearer authentication on every
 * route that is not explicitly public, a per-key rate limit, request ids, and one error handler
 * that turns every failure into a problem+json body.
 */
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyBaseLogger, type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { Ajv, type Options as AjvOptions } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
import { AppError, ERROR_CATALOGUE, isAppError } from '../domain/errors.js';
import type { Principal } from '../domain/types.js';
import type { Store } from '../store/env.js';
import { authenticate } from './auth.js';
import { fieldErrorsFromAjv, toProblem, type AjvErrorLike } from './problem.js';
import { KeyRateLimiter } from './rate-limit.js';
import { registerOpenApi } from './openapi.js';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal;
  }
  interface FastifyContextConfig {
    /** Route answers without an API key (health probes, error docs, tracking links). */
    public?: boolean;
  }
}

export interface HttpContext {
  config: Config;
  store: Store;
  logger: Logger;
}

/** A group of routes; each area of the API registers itself through one of these. */
export type RouteModule = (app: FastifyInstance, ctx: HttpContext) => void;

const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: Ajv) => Ajv;

/**
 * Bodies are validated strictly: no coercion, no silently dropped properties, every error
 * reported. Query strings are text by nature, so there (only) numbers and booleans are coerced.
 */
function makeAjv(coerce: boolean): Ajv {
  const opts: AjvOptions = { removeAdditional: false, coerceTypes: coerce, allErrors: true, useDefaults: false, strict: false };
  return addFormats(new Ajv(opts));
}

export class HttpServer {
  private app: FastifyInstance | null = null;

  constructor(
    private readonly ctx: HttpContext,
    private readonly routes: RouteModule[],
  ) {}

  async start(): Promise<void> {
    const app = this.build();
    const { host, port } = this.ctx.config.http;
    await app.listen({ host, port });
    this.app = app;
  }

  /** Stops accepting connections and waits for in-flight requests (Fastify closes gracefully). */
  async stop(): Promise<void> {
    const app = this.app;
    this.app = null;
    if (app) await app.close();
  }

  get port(): number {
    const addr = this.app?.server.address() as AddressInfo | null;
    return addr?.port ?? 0;
  }

  get listening(): boolean {
    return this.app?.server.listening ?? false;
  }

  build(): FastifyInstance {
    const { config, store, logger } = this.ctx;
    const app = Fastify({
      loggerInstance: logger.child({ component: 'http' }) as FastifyBaseLogger,
      bodyLimit: config.http.bodyLimit,
      trustProxy: config.http.trustProxy,
      genReqId: () => randomUUID(),
      requestIdHeader: false,
      return503OnClosing: true,
      // Connections that trickle bytes must not hold a socket forever (slow loris).
      requestTimeout: 60_000,
      connectionTimeout: 0,
      keepAliveTimeout: 5_000,
    });
    // Bodies are JSON only (spec section 4); Fastify's built-in text/plain parser would turn a
    // text body into a string that then fails schema validation with 422 instead of 415.
    app.removeContentTypeParser('text/plain');
    const bodyAjv = makeAjv(false);
    const queryAjv = makeAjv(true);
    app.setValidatorCompiler(({ schema, httpPart }) =>
      (httpPart === 'querystring' || httpPart === 'params' ? queryAjv : bodyAjv).compile(schema),
    );
    // Before the first route: the OpenAPI document learns routes as they are declared.
    registerOpenApi(app, config);

    const limiter = new KeyRateLimiter({ limit: config.api.rateLimit, windowMs: config.api.rateWindowMs });
    app.decorateRequest('principal', null as unknown as Principal);
    app.addHook('onRequest', async (req, reply) => {
      reply.header('x-request-id', req.id);
      if (req.is404 || req.routeOptions.config?.public) return;
      req.principal = authenticate(store, req.headers.authorization);
      const rate = limiter.take(req.principal.keyId);
      reply.header('ratelimit-limit', rate.limit);
      reply.header('ratelimit-remaining', rate.remaining);
      reply.header('ratelimit-reset', rate.resetSeconds);
      if (!rate.allowed) {
        throw new AppError('rate_limit_exceeded', `At most ${rate.limit} requests per ${config.api.rateWindowMs / 1000} s per API key`, {
          headers: { 'retry-after': String(rate.resetSeconds) },
        });
      }
    });

    app.setNotFoundHandler((req, reply) => {
      const path = req.url.split('?')[0];
      this.sendProblem(req, reply, new AppError('not_found', `No route ${req.method} ${path}`));
    });
    app.setErrorHandler((err: FastifyError, req, reply) => this.sendProblem(req, reply, this.toAppError(err, req)));

    app.get('/errors/:code', { config: { public: true } }, async (req) => {
      const { code } = req.params as { code: string };
      const entry = (ERROR_CATALOGUE as Record<string, { status: number; title: string }>)[code];
      if (!entry) throw new AppError('not_found', `No error code ${code}`);
      return { code, status: entry.status, title: entry.title };
    });

    for (const register of this.routes) register(app, this.ctx);
    return app;
  }

  private toAppError(err: FastifyError, req: FastifyRequest): AppError {
    if (isAppError(err)) return err;
    if (err.validation) {
      const where = err.validationContext === 'body' ? 'body' : err.validationContext;
      return new AppError('validation_failed', `The request ${where} has invalid fields`, {
        errors: fieldErrorsFromAjv(err.validation as unknown as AjvErrorLike[]),
      });
    }
    switch (err.code) {
      case 'FST_ERR_CTP_INVALID_JSON_BODY':
      case 'FST_ERR_CTP_EMPTY_JSON_BODY':
        return new AppError('invalid_json', 'The body is not valid JSON');
      case 'FST_ERR_CTP_BODY_TOO_LARGE':
        return new AppError('payload_too_large', `The body exceeds ${this.ctx.config.http.bodyLimit} bytes`);
      case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
        return new AppError('unsupported_media_type', 'Send bodies as Content-Type: application/json');
    }
    if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) {
      return new AppError('bad_request', err.message);
    }
    req.log.error({ err }, 'unhandled error');
    return new AppError('internal_error', 'An internal error occurred; the request id identifies it in the logs', { cause: err });
  }

  private sendProblem(req: FastifyRequest, reply: FastifyReply, err: AppError): void {
    const path = req.url.split('?')[0];
    const problem = toProblem(err, { publicUrl: this.ctx.config.publicUrl, instance: `${req.method} ${path}`, requestId: String(req.id) });
    if (err.headers) reply.headers(err.headers);
    reply.code(err.status).header('x-request-id', req.id).type('application/problem+json').send(JSON.stringify(problem));
  }
}
