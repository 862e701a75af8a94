/**
 * The HTTP adapter: Fastify with strict request validation, bearer authentication on every
 * route that is not explicitly public, a per-key rate limit, request ids, and one error handler
 * that turns every failure into a problem+json body.
 */
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
import type { Coordination } from '../coordination/port.js';
import { AppError, ERROR_CATALOGUE, isAppError } from '../domain/errors.js';
import type { Principal } from '../domain/types.js';
import type { StorePort } from '../store/port/index.js';
import { authenticate, authenticateFrame } from './auth.js';
import { fieldErrorsFromAjv, toProblem, type AjvErrorLike } from './problem.js';
import { registerRateLimits } from './rate-limit.js';
import { registerOpenApi } from './openapi.js';
import { registerJsonParser } from './json-body.js';
import { maxBodyValues } from './json-scan.js';
import { registerValidators } from './validators.js';
import { registerBodyBudget, type BodyBudget } from './body-budget.js';
import { MAX_HEADER_BYTES, registerClientCompat } from './client-compat.js';
import { listenFailure } from '../domain/listen-problem.js';
import { lingerOnClose } from './lingering-close.js';
import { registerRequestDeadline } from './request-deadline.js';
import { PublicUrl } from '../domain/public-url.js';
import { settledWithin } from '../domain/settle.js';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal;
  }
  interface FastifyInstance {
    /** Counts a refused credential against api.authFailureLimit; throws 429 beyond it. */
    countAuthFailure(req: FastifyRequest): Promise<void>;
  }
  interface FastifyContextConfig {
    /** Route answers without an API key (health probes, error docs, tracking links). */
    public?: boolean;
    /**
     * Route of the dashboard's frames that authenticates as an iframe's request does (auth.ts
     * authenticateFrame: the session cookie alone, cross-site refused, or an API key), here
     * before the body is read, so that it may take a body larger than a public route's.
     */
    frame?: boolean;
  }
}

/**
 * The configuration the HTTP adapter reads: the server itself (hostname, publicUrl, http, api,
 * shutdown), the guards of GET /metrics and /ops/* (operator-access.ts) and the /send/broadcast body limit (routes/send.ts).
 */
export type HttpSettings = Pick<Config, 'hostname' | 'publicUrl' | 'http' | 'api' | 'shutdown'> & {
  metrics: Pick<Config['metrics'], 'token' | 'operatorAccounts'>;
  limits: Pick<Config['limits'], 'broadcastMessages'>;
};

export interface HttpContext {
  config: HttpSettings;
  store: StorePort;
  /** The node's coordination: the per-key and invalid-key limits are its keyed limits (rate-limit.ts). */
  coordination: Pick<Coordination, 'keyedRate'>;
  logger: Logger;
  /** Base of problem `type` links and OpenAPI `servers`; default: config.publicUrl or this server's own address. */
  publicUrl?: PublicUrl;
  /** How long a request waits for any one store call (compose/store-engine.ts requestDeadlineMs); 0 or absent: no deadline. */
  requestDeadlineMs?: number;
}

/** A group of routes; each area of the API registers itself through one of these. */
export type RouteModule = (app: FastifyInstance, ctx: HttpContext) => void;

/**
 * Largest body a public route (no credential) reads (issue 29): the dashboard's login is a key of
 * at most 300 characters and the one-click unsubscribe a short form, so nothing large is ever
 * buffered or parsed for an anonymous client.
 */
export const PUBLIC_BODY_LIMIT = 16 * 1024;

/** What a request that arrives during shutdown is told to wait before retrying (RFC 9110 10.2.3). */
const SHUTDOWN_RETRY_AFTER_S = 5;

export class HttpServer {
  private app: FastifyInstance | null = null;
  /** Set at the start of stop(): requests that arrive from then on are answered 503. */
  private closing = false;
  private bodyBudget: BodyBudget | null = null;
  private readonly publicUrl: PublicUrl;

  constructor(
    private readonly ctx: HttpContext,
    private readonly routes: RouteModule[],
  ) {
    const { config } = ctx;
    this.publicUrl = ctx.publicUrl ?? new PublicUrl({ configured: config.publicUrl, http: config.http, hostname: config.hostname, boundPort: () => this.port });
  }

  async start(): Promise<void> {
    this.closing = false;
    const app = this.build();
    const { host, port } = this.ctx.config.http;
    await app.listen({ host, port }).catch((err: unknown) => {
      throw listenFailure(err, { what: 'HTTP API', host, port, setting: 'http.host / http.port (POSTRIDER_HTTP_HOST / POSTRIDER_HTTP_PORT)' });
    });
    this.app = app;
  }

  /**
   * Graceful: the listening socket closes at once and idle keep-alive connections are closed
   * (Fastify's forceCloseConnections 'idle'); a request that still arrives on an open connection
   * gets 503 service_unavailable with Retry-After and `Connection: close`; requests in flight
   * finish. After shutdown.graceMs whatever is still open is cut.
   */
  async stop(): Promise<void> {
    const app = this.app;
    this.app = null;
    if (!app) return;
    this.closing = true;
    const closed = app.close();
    if (!(await settledWithin(closed, this.ctx.config.shutdown.graceMs))) {
      this.ctx.logger.warn('http grace period over: closing the remaining connections');
      app.server.closeAllConnections();
      await closed;
    }
  }

  get port(): number {
    const addr = this.app?.server.address() as AddressInfo | null;
    return addr?.port ?? 0;
  }

  /** Request body bytes charged to http.bodyBufferLimit now (body-budget.ts). */
  get bodyBytesBuffered(): number {
    return this.bodyBudget?.inUse ?? 0;
  }

  get listening(): boolean {
    return this.app?.server.listening ?? false;
  }

  build(): FastifyInstance {
    const app = this.createApp();
    this.registerParsing(app);
    // Before the first route: the OpenAPI document learns routes as they are declared.
    registerOpenApi(app, this.ctx.config, () => this.publicUrl.value);
    registerRequestDeadline(app, this.ctx.requestDeadlineMs ?? 0);
    this.registerRequestHooks(app);
    this.registerFallbacks(app);
    for (const register of this.routes) register(app, this.ctx);
    return app;
  }

  /** Fastify with the server-wide options: limits, timeouts, and problems for framework errors. */
  private createApp(): FastifyInstance {
    const { config, logger } = this.ctx;
    return Fastify({
      loggerInstance: logger.child({ component: 'http' }) as FastifyBaseLogger,
      bodyLimit: config.http.bodyLimit,
      trustProxy: config.http.trustProxy,
      genReqId: () => randomUUID(),
      // Fastify's own two lines per request ("incoming request", "request completed") are replaced
      // by the one line the onResponse hook of registerRequestHooks writes.
      logController: new LogController({ disableRequestLogging: true }),
      requestIdHeader: false,
      // Answered by the onRequest hook instead, as a problem with Retry-After (see stop()).
      return503OnClosing: false,
      // Connections that trickle bytes must not hold a socket forever (slow loris).
      requestTimeout: 60_000,
      connectionTimeout: 0,
      // An idle keep-alive connection is kept longer than most clients keep theirs (.NET 60 s,
      // load balancers' usual 60 s): a client that reuses a connection just as the server closes
      // it gets a reset, which most SDKs do not retry for a POST. With Node's 5 s that race came
      // with any pause of about 5 s between sends. 72 s is Fastify's default; `Keep-Alive:
      // timeout=72` tells the clients that read it (undici). Idle connections are closed at once
      // at shutdown (http-shutdown test).
      keepAliveTimeout: 72_000,
      // RFC 9112 3.2: an HTTP/1.1 request without Host is a 400. Node would send that 400 with an
      // empty body; the onRequest hook sends it as a problem instead.
      http: { requireHostHeader: false, maxHeaderSize: MAX_HEADER_BYTES },
      // `/channels/` is `/channels` and `//channels` too: clients that join a base URL and a path
      // add a slash, and a base URL ending in one (`http://host:8080/`) doubles the path's first.
      routerOptions: { ignoreTrailingSlash: true, ignoreDuplicateSlashes: true },
      // Errors Fastify's router raises before any route or hook (a path parameter longer than
      // maxParamLength, broken %-encoding in the path) would otherwise be answered with
      // Fastify's own JSON; they become problems like every other error.
      frameworkErrors: (err, req, reply) => {
        reply.header('x-request-id', req.id);
        const appError =
          err.code === 'FST_ERR_MAX_PARAM_LENGTH'
            ? new AppError('not_found', 'No resource has an id that long')
            : err.code === 'FST_ERR_BAD_URL'
              ? new AppError('bad_request', 'The request path is not validly %-encoded')
              : this.problemOf(err, req);
        this.sendProblem(req, reply, appError);
      },
      // Requests Node's HTTP parser refuses (not HTTP, headers too large, too slow) never reach
      // Fastify's request cycle; they get a problem as well instead of Fastify's own JSON.
      clientErrorHandler: (err, socket) => this.clientError(err, socket),
    });
  }

  /** JSON bodies only, validated strictly; query strings and path parameters with coercion. */
  private registerParsing(app: FastifyInstance): void {
    // RFC 9110 10.1.1: an Expect other than 100-continue MAY be refused with 417, which Node does
    // with an empty body; the request is served as if the field were absent instead, so every
    // answer stays a result or a problem.
    app.server.on('checkExpectation', (req, res) => app.server.emit('request', req, res));
    // Bodies are JSON only (spec section 4); Fastify's built-in text/plain parser would turn a
    // text body into a string that then fails schema validation with 422 instead of 415.
    app.removeContentTypeParser('text/plain');
    // Nesting, keys per object and the value count are capped by the parser's pre-scan
    // (json-scan.ts), before JSON.parse: a body nested 1,500 levels deep once overflowed the
    // store's msgpack encoder (a 500 found by fuzzing).
    const valueCounts = new WeakMap<object, number>();
    registerJsonParser(app, { maxValues: maxBodyValues(this.ctx.config.limits.broadcastMessages), valueCounts });
    registerValidators(app, valueCounts);
    this.bodyBudget = registerBodyBudget(app, this.ctx.config.http.bodyBufferLimit);
    // Before the first route: public routes read small bodies only (a route's own smaller limit stays).
    app.addHook('onRoute', (route) => {
      if (route.config?.public) route.bodyLimit = Math.min(route.bodyLimit ?? PUBLIC_BODY_LIMIT, PUBLIC_BODY_LIMIT);
    });
  }

  /** Shutdown refusals, authentication and the rate limits, and the one log line per request. */
  private registerRequestHooks(app: FastifyInstance): void {
    const { config, store, coordination } = this.ctx;
    // Registers the per-key limit, a route hook that runs after every root onRequest hook: after
    // authentication below, and after client-compat's URL-length check (a 414 is not counted).
    const authFailures = registerRateLimits(app, config.api, coordination);
    // Public routes that check a credential themselves (the dashboard's login) count their refusals here too.
    app.decorate('countAuthFailure', authFailures);
    app.decorateRequest('principal', null as unknown as Principal);
    app.addHook('onRequest', async (req, reply) => {
      reply.header('x-request-id', req.id);
      if (this.closing) {
        throw new AppError('service_unavailable', 'postrider is shutting down; retry in a few seconds', {
          headers: { 'retry-after': String(SHUTDOWN_RETRY_AFTER_S), connection: 'close' },
        });
      }
      if (req.raw.httpVersion === '1.1' && req.headers.host === undefined) throw new AppError('bad_request', 'An HTTP/1.1 request needs a Host header');
      // Unmatched paths are answered 404/405 by registerFallbacks's hook, before any body is read.
      if (req.is404 || req.routeOptions.config?.public) return;
      try {
        req.principal = req.routeOptions.config?.frame ? await authenticateFrame(store, req.headers) : await authenticate(store, req.headers);
      } catch (err) {
        // Only a refused key counts: a store that cannot be reached (503) says nothing of the
        // key, and counting it would answer the client's next tries 429 "invalid API key".
        if (req.headers.authorization !== undefined && isAppError(err) && err.code === 'unauthorized') await authFailures(req);
        throw err;
      }
    });

    // One log line per request: method, path without the query (a query may carry addresses),
    // status, time and the principal's key id (never the key). The request id is in reqId.
    app.addHook('onResponse', async (req, reply) => {
      req.log.info(
        { method: req.method, path: req.url.split('?')[0], status: reply.statusCode, ms: Math.round(reply.elapsedTime * 10) / 10, keyId: req.principal?.keyId },
        'request',
      );
    });

    // A request in flight when shutdown began ends its connection with its answer, instead of
    // leaving it idle for keepAliveTimeout (RFC 9112 9.6: the server signals close).
    app.addHook('onSend', async (req, reply) => {
      if (this.closing) reply.header('connection', 'close');
      // An answer to a key or session holds the account's data: no cache keeps it (RFC 9111
      // 5.2.2.5), not even the browser's after the dashboard signed out. A route may say otherwise.
      if (req.principal && reply.getHeader('cache-control') === undefined) reply.header('cache-control', 'no-store');
      // An answer that closes before the body was read (a body over its limit): lingering-close.ts.
      if (!req.raw.complete && reply.getHeader('connection') === 'close' && req.raw.socket) lingerOnClose(req.raw.socket);
    });
  }

  /** 404 and 405 as problems, the one error handler, and the error documentation route. */
  private registerFallbacks(app: FastifyInstance): void {
    const compat = registerClientCompat(app);
    const unmatched = (req: FastifyRequest): AppError => {
      const path = req.url.split('?')[0];
      const allow = compat.allowedMethods(req);
      if (allow.length === 0) return new AppError('not_found', `No route ${req.method} ${path}`);
      return new AppError('method_not_allowed', `${path} does not support ${req.method}; it supports ${allow.join(', ')}`, { headers: { allow: allow.join(', ') } });
    };
    // Answered from the headers (issue 29): Fastify's not-found route would read and parse the
    // body first, for anyone. After client-compat's URL-length check, so a long URL stays a 414.
    app.addHook('onRequest', async (req) => {
      if (req.is404) throw unmatched(req);
    });
    app.setNotFoundHandler((req, reply) => this.sendProblem(req, reply, unmatched(req)));
    app.setErrorHandler((err: FastifyError, req, reply) => this.sendProblem(req, reply, this.problemOf(err, req)));

    app.get('/errors/:code', { config: { public: true } }, async (req) => {
      const { code } = req.params as { code: string };
      const entry = (ERROR_CATALOGUE as Record<string, { status: number; title: string }>)[code];
      if (!entry) throw new AppError('not_found', `No error code ${code}`);
      return { code, status: entry.status, title: entry.title };
    });
  }

  /**
   * toAppError, and an internal_error problem if describing the error fails itself: an exception
   * in an error handler makes Fastify answer its own JSON instead of a problem (a field hint's
   * lookup did, on a key named `constructor`).
   */
  private problemOf(err: FastifyError, req: FastifyRequest): AppError {
    try {
      return this.toAppError(err, req);
    } catch (failure) {
      req.log.error({ err: failure, cause: err }, 'describing an error failed');
      return new AppError('internal_error', 'An internal error occurred; the request id identifies it in the logs', { cause: failure });
    }
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
        // The route's own limit: http.bodyLimit, or PUBLIC_BODY_LIMIT on a public route.
        return new AppError('payload_too_large', `The body exceeds ${req.routeOptions.bodyLimit ?? this.ctx.config.http.bodyLimit} bytes`);
      case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
        return new AppError('unsupported_media_type', 'Send bodies as Content-Type: application/json');
    }
    if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) {
      return new AppError('bad_request', err.message);
    }
    req.log.error({ err }, 'unhandled error');
    return new AppError('internal_error', 'An internal error occurred; the request id identifies it in the logs', { cause: err });
  }

  /** Mirrors Fastify's default client error handler, with a problem body (always 400 bad_request). */
  private clientError(err: Error & { code?: string }, socket: Duplex): void {
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    const detail =
      err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? 'The request was not complete in time'
        : err.code === 'HPE_HEADER_OVERFLOW'
          ? 'The request headers are too large'
          : 'The request is not valid HTTP/1.1';
    const requestId = randomUUID();
    const body = JSON.stringify(toProblem(new AppError('bad_request', detail), { publicUrl: this.publicUrl.value, instance: '(unparsed request)', requestId }));
    if (socket.writable) {
      socket.write(
        `HTTP/1.1 400 Bad Request\r\nContent-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
          `X-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
      );
    }
    socket.destroy();
  }

  private sendProblem(req: FastifyRequest, reply: FastifyReply, err: AppError): void {
    const path = req.url.split('?')[0];
    const problem = toProblem(err, { publicUrl: this.publicUrl.value, instance: `${req.method} ${path}`, requestId: String(req.id) });
    if (err.headers) reply.headers(err.headers);
    reply.code(err.status).header('x-request-id', req.id).type('application/problem+json').send(JSON.stringify(problem));
  }
}
