/**
 * Operations endpoints: GET /health (liveness), GET /ready (readiness), GET /metrics
 * (Prometheus). /health and /ready are public; /health never touches the store, /ready does one
 * cheap read of it (Store.healthy), so a store that fails reads is not reported ready.
 * /metrics needs `metrics.token` as a Bearer token, or, when no token is configured, a client on
 * loopback that did not come through a proxy.
 *
 * opsRoutes also counts every HTTP request of the server (a root onResponse hook: Fastify
 * gives root hooks to every route of the root context, whenever they are added before ready).
 */
import type { FastifyInstance } from 'fastify';
import type { MailType } from '../../domain/types.js';
import type { OpsSources } from '../../domain/wire.js';
import type { Metrics } from '../../log/metrics.js';
import type { SourceView } from '../../delivery/source-report.js';
import { metricsGuard, operatorOnRequest } from '../operator-access.js';
import { sourcesBody } from '../response-schemas.js';
import type { HttpContext, RouteModule } from '../server.js';

export interface OpsDeps {
  /** One entry per component the daemon needs (store, pool, http, smtp...): true when up. */
  readiness: () => Record<string, boolean>;
  metrics: Metrics;
  /** The sending IPs with their PTR checked (delivery/source-report.ts). */
  sources: { list(): Promise<SourceView[]> };
  /** The pool each mail type goes out through unless its channel names one (delivery.defaultPools). */
  defaultPools: Readonly<Record<MailType, string>>;
}

const TAGS = ['operations'];

const healthSchema = {
  summary: 'Liveness: the process answers',
  tags: TAGS,
  response: { 200: { type: 'object', properties: { status: { type: 'string', const: 'ok' } }, required: ['status'] } },
} as const;

const readinessBody = {
  type: 'object',
  properties: {
    status: { type: 'string', enum: ['ready', 'not_ready'] },
    components: { type: 'object', additionalProperties: { type: 'boolean' } },
    notReady: { type: 'array', items: { type: 'string' } },
  },
  required: ['status', 'components', 'notReady'],
} as const;

const readySchema = {
  summary: 'Readiness: store open, worker pool up, listeners bound',
  tags: TAGS,
  response: { 200: readinessBody, 503: readinessBody },
} as const;

const sourcesSchema = {
  summary: 'Sending IPs: each source, its pools and its reverse DNS check',
  description:
    'Each source of delivery.sources (or the one implicit source, the kernel\'s choice) with its address, EHLO name, rate and pools, and whether the address\'s PTR names the EHLO name and that name\'s A/AAAA include the address (forward-confirmed reverse DNS). Read as /metrics (`Authorization: Bearer <metrics.token>`, or from loopback without a token), or with an account-level API key (or the dashboard session of one) of an account in `metrics.operatorAccounts`. `defaultPools`: the pool each mail type goes out through unless its channel names one.',
  tags: TAGS,
  response: { 200: sourcesBody },
} as const;

const metricsSchema = {
  summary: 'Prometheus metrics (text exposition format)',
  description: 'Needs `Authorization: Bearer <metrics.token>`; without a configured token only loopback clients may read it.',
  tags: TAGS,
} as const;

export function opsRoutes(deps: OpsDeps): RouteModule {
  return (app: FastifyInstance, { config, store }: HttpContext) => {
    const { metrics } = deps;

    app.addHook('onResponse', (req, reply, done) => {
      // The pattern, not the URL: ids in paths would make a label value per resource.
      const route = req.is404 ? '(unmatched)' : (req.routeOptions.url ?? '(unmatched)');
      metrics.observeHttpRequest({ method: req.method, route, status: reply.statusCode, seconds: reply.elapsedTime / 1000 });
      done();
    });

    app.get('/health', { config: { public: true }, schema: healthSchema }, async () => ({ status: 'ok' }));

    app.get('/ready', { config: { public: true }, schema: readySchema }, async (_req, reply) => {
      const components = deps.readiness();
      const notReady = Object.keys(components).filter((name) => !components[name]);
      reply.code(notReady.length === 0 ? 200 : 503);
      return { status: notReady.length === 0 ? 'ready' : 'not_ready', components, notReady };
    });

    const allowed = metricsGuard(config.metrics.token);
    app.get('/metrics', { config: { public: true }, schema: metricsSchema }, async (req, reply) => {
      allowed(req);
      const text = await metrics.render();
      return reply.header('cache-control', 'no-store').type(metrics.contentType).send(text);
    });

    // The operator's view: the metrics' access, or an operator account's key or dashboard session.
    const operator = operatorOnRequest(app, { ...config.metrics, store });
    app.get('/ops/sources', { config: { public: true }, schema: sourcesSchema, onRequest: operator }, async (_req, reply): Promise<OpsSources> => {
      reply.header('cache-control', 'no-store');
      return { results: await deps.sources.list(), defaultPools: { ...deps.defaultPools } };
    });
  };
}
