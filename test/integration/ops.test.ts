/**
 * Operations endpoints over a real HttpServer (auth hook, error handler) on loopback, with a real
 * store: /health, /ready, /metrics and /openapi.json. The daemon's own wiring is covered by the
 * serve end-to-end tests; here the readiness function and the metric sources are the test's.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import type { Config } from '../../src/config/schema.js';
import { registerOpenApi } from '../../src/http/openapi.js';
import { activityRoutes } from '../../src/http/routes/activity.js';
import { channelRoutes } from '../../src/http/routes/channels.js';
import { domainRoutes } from '../../src/http/routes/domains.js';
import { opsRoutes } from '../../src/http/routes/ops.js';
import { sendRoutes } from '../../src/http/routes/send.js';
import { statisticsRoutes } from '../../src/http/routes/statistics.js';
import { suppressionRoutes } from '../../src/http/routes/suppressions.js';
import { webhookRoutes } from '../../src/http/routes/webhooks.js';
import { HttpServer, type HttpContext, type RouteModule } from '../../src/http/server.js';
import { LocalCoordination } from '../../src/coordination/local.js';
import { createLogger } from '../../src/log/logger.js';
import { Metrics, type MetricsSources } from '../../src/log/metrics.js';
import { readQueueSnapshot } from '../../src/ops/queue-snapshot.js';
import type { StorePort } from '../../src/store/port/index.js';
import { openTestStore, queueMessage } from '../support/delivery.js';
import { openStore } from '../support/store.js';

/** GET /ops/sources is tested in ops-sources.test.ts. */
const NO_SOURCES = { list: async () => [] };
const DEFAULT_POOLS = { transactional: 'default', broadcast: 'default' };

const TOKEN = 'metrics-token-0123456789abcdef';

interface Server {
  http: HttpServer;
  url: string;
  config: Config;
  metrics: Metrics;
}

let dataDir: string;
let store: StorePort;
let poolUp = true;
const servers: HttpServer[] = [];

function configWith(overrides: Record<string, unknown> = {}): Config {
  return loadConfig({ env: {}, overrides: { dataDir, 'http.port': 0, 'log.level': 'silent', ...overrides } });
}

async function startServer(opts: { overrides?: Record<string, unknown>; sources?: MetricsSources } = {}): Promise<Server> {
  const config = configWith(opts.overrides);
  const metrics = new Metrics({ sources: opts.sources ?? { storeSizeBytes: () => store.sizeBytes() } });
  let http: HttpServer | undefined;
  const readiness = () => ({ store: store.healthy(), pool: poolUp, http: http?.listening ?? false });
  http = new HttpServer({ config, store, coordination: new LocalCoordination({ nodeId: 'test' }), logger: createLogger({ level: 'silent' }) }, [opsRoutes({ readiness, metrics, sources: NO_SOURCES, defaultPools: DEFAULT_POOLS }), channelRoutes({} as never)]);
  await http.start();
  servers.push(http);
  return { http, url: `http://127.0.0.1:${http.port}`, config, metrics };
}

async function get(url: string, headers: Record<string, string> = {}) {
  const res = await fetch(url, { headers });
  const text = await res.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* the metrics text */
  }
  return { status: res.status, headers: res.headers, body, text };
}

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-ops-'));
  store = await openStore(dataDir);
});

afterAll(async () => {
  for (const s of servers) await s.stop();
  await store.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe('GET /health', () => {
  let s: Server;
  beforeAll(async () => {
    s = await startServer();
  });

  it('answers 200 {status: "ok"} without credentials', async () => {
    const res = await get(`${s.url}/health`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok' });
  });
});

describe('GET /ready', () => {
  let s: Server;
  beforeAll(async () => {
    s = await startServer();
  });

  it('answers 200 and lists every component as up when all are', async () => {
    const res = await get(`${s.url}/ready`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ready', components: { store: true, pool: true, http: true }, notReady: [] });
  });

  it('answers 503 naming the component that is down', async () => {
    poolUp = false;
    try {
      const res = await get(`${s.url}/ready`);
      expect(res.status).toBe(503);
      expect(res.body).toEqual({ status: 'not_ready', components: { store: true, pool: false, http: true }, notReady: ['pool'] });
    } finally {
      poolUp = true;
    }
  });

  it('answers 503 after the store is stopped, and 200 again once it is reopened', async () => {
    await store.stop();
    try {
      const res = await get(`${s.url}/ready`);
      expect(res.status).toBe(503);
      expect(res.body.notReady).toEqual(['store']);
    } finally {
      await store.start();
    }
    expect((await get(`${s.url}/ready`)).status).toBe(200);
  });
});

describe('GET /metrics without metrics.token', () => {
  let s: Server;
  beforeAll(async () => {
    s = await startServer({
      sources: {
        queue: () => ({ queued: 7, leased: 2, dueNow: 3, oldestDueAgeSeconds: 42 }),
        pool: () => ({ threads: 3, queued: 1, utilization: 0.25 }),
        storeSizeBytes: () => {
          throw new Error('store is not open');
        },
      },
    });
  });

  it('serves the Prometheus text format to a loopback client', async () => {
    const res = await get(`${s.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    for (const name of [
      'postrider_http_requests_total',
      'postrider_http_request_duration_seconds',
      'postrider_messages_accepted_total',
      'postrider_messages_delivered_total',
      'postrider_messages_deferred_total',
      'postrider_messages_bounced_total',
      'postrider_delivery_latency_seconds',
      'postrider_dkim_sign_duration_seconds',
      'postrider_queue_depth',
      'postrider_queue_oldest_due_age_seconds',
      'postrider_worker_pool_utilization_ratio',
      'postrider_store_size_bytes',
      'process_cpu_seconds_total',
      'nodejs_eventloop_lag_seconds',
    ]) {
      expect(res.text).toContain(`# TYPE ${name} `);
    }
  });

  it('reads the gauges from the sources at scrape time, and a failing source does not fail the scrape', async () => {
    const { text } = await get(`${s.url}/metrics`);
    expect(text).toContain('postrider_queue_depth{state="queued"} 7');
    expect(text).toContain('postrider_queue_depth{state="leased"} 2');
    expect(text).toContain('postrider_queue_due 3');
    expect(text).toContain('postrider_queue_oldest_due_age_seconds 42');
    expect(text).toContain('postrider_worker_pool_utilization_ratio 0.25');
    expect(text).toContain('postrider_worker_pool_threads 3');
    expect(text).toContain('postrider_store_size_bytes 0');
  });

  it('counts HTTP requests by route pattern, never by raw URL', async () => {
    await get(`${s.url}/channels/6f0b8a70-0000-4000-8000-000000000000`);
    await get(`${s.url}/no/such/path`);
    const { text } = await get(`${s.url}/metrics`);
    expect(text).toContain('postrider_http_requests_total{method="GET",route="/channels/:id",status="401"} 1');
    expect(text).toContain('postrider_http_requests_total{method="GET",route="(unmatched)",status="404"} 1');
    expect(text).not.toContain('6f0b8a70');
    expect(text).not.toContain('/no/such/path');
  });

  it('shows what the record methods counted, by delivery type', async () => {
    s.metrics.recordAccepted('live', 3);
    s.metrics.recordDelivered('live', 12);
    s.metrics.recordDeferred('sandbox');
    s.metrics.recordBounced('live', 2);
    await s.metrics.timeDkimSign(async () => 'signed');
    const { text } = await get(`${s.url}/metrics`);
    expect(text).toContain('postrider_messages_accepted_total{delivery_type="live"} 3');
    expect(text).toContain('postrider_messages_delivered_total{delivery_type="live"} 1');
    expect(text).toContain('postrider_messages_deferred_total{delivery_type="sandbox"} 1');
    expect(text).toContain('postrider_messages_bounced_total{delivery_type="live"} 2');
    expect(text).toContain('postrider_delivery_latency_seconds_bucket{le="15",delivery_type="live"} 1');
    expect(text).toContain('postrider_dkim_sign_duration_seconds_count 1');
  });

  it('refuses 403 a request that came through a proxy, even from loopback', async () => {
    const res = await get(`${s.url}/metrics`, { 'x-forwarded-for': '127.0.0.1' });
    expect(res.status).toBe(403);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(res.body.code).toBe('forbidden');
  });

  it('refuses 403 a client that is not on loopback', async () => {
    const app = s.http.build();
    try {
      const res = await app.inject({ method: 'GET', url: '/metrics', remoteAddress: '203.0.113.9' });
      expect(res.statusCode).toBe(403);
      const ok = await app.inject({ method: 'GET', url: '/metrics', remoteAddress: '::ffff:127.0.0.1' });
      expect(ok.statusCode).toBe(200);
    } finally {
      await app.close();
    }
  });
});

describe('GET /metrics with metrics.token', () => {
  let s: Server;
  beforeAll(async () => {
    s = await startServer({ overrides: { 'metrics.token': TOKEN } });
  });

  it('answers 401 with a Bearer challenge without the token, even from loopback', async () => {
    const res = await get(`${s.url}/metrics`);
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer /);
    expect(res.body.code).toBe('unauthorized');
  });

  it('answers 401 to a wrong token and to an API-key-shaped one', async () => {
    expect((await get(`${s.url}/metrics`, { authorization: `Bearer ${TOKEN}x` })).status).toBe(401);
    expect((await get(`${s.url}/metrics`, { authorization: 'Bearer pr_notthemetricstoken' })).status).toBe(401);
    expect((await get(`${s.url}/metrics`, { authorization: TOKEN })).status).toBe(401);
  });

  it('serves the metrics with the token, also through a proxy', async () => {
    const res = await get(`${s.url}/metrics`, { authorization: `Bearer ${TOKEN}`, 'x-forwarded-for': '198.51.100.7' });
    expect(res.status).toBe(200);
    expect(res.text).toContain('postrider_http_requests_total');
  });

  it('is refused by the configuration when too short to be a secret', () => {
    expect(() => configWith({ 'metrics.token': 'short' })).toThrow(/metrics\.token/);
  });
});

describe('readQueueSnapshot', () => {
  it('reads zeros from an empty queue', async () => {
    const t = await openTestStore();
    try {
      expect(await readQueueSnapshot(t.store, Date.now())).toEqual({ queued: 0, leased: 0, dueNow: 0, oldestDueAgeSeconds: 0 });
    } finally {
      await t.close();
    }
  });

  it('counts queued, due and leased jobs and measures how long the earliest due job has waited', async () => {
    const t = await openTestStore();
    const T0 = Date.UTC(2025, 0, 6, 9, 0, 0);
    try {
      await queueMessage(t.store, { to: ['a@one.test'], now: new Date(T0 - 90_000) });
      await queueMessage(t.store, { to: ['b@two.test'], now: new Date(T0 - 30_000) });
      await queueMessage(t.store, { to: ['c@three.test'], now: new Date(T0 + 60_000) });
      expect(await readQueueSnapshot(t.store, T0)).toEqual({ queued: 3, leased: 0, dueNow: 2, oldestDueAgeSeconds: 90 });
      await t.store.queue.lease({ owner: 'local', nowMs: T0, max: 1, leaseMs: 60_000 });
      expect(await readQueueSnapshot(t.store, T0)).toEqual({ queued: 2, leased: 1, dueNow: 1, oldestDueAgeSeconds: 30 });
      // Nothing overdue: the earliest job is due in the future.
      expect((await readQueueSnapshot(t.store, T0 - 100_000)).oldestDueAgeSeconds).toBe(0);
    } finally {
      await t.close();
    }
  });
});

describe('GET /openapi.json', () => {
  /** Every route as declared, in the order HttpServer.build() declares them (OpenAPI first). */
  const declared: { method: string; url: string }[] = [];
  let app: FastifyInstance;
  let doc: any;

  beforeAll(async () => {
    const config = configWith();
    app = Fastify();
    // Only the document is under test: skip compiling validators.
    app.setValidatorCompiler(() => () => true);
    registerOpenApi(app, config);
    app.addHook('onRoute', (r) => {
      for (const method of [r.method].flat()) if (method !== 'HEAD') declared.push({ method, url: r.url });
    });
    app.get('/errors/:code', { config: { public: true } }, async () => ({}));
    const ctx: HttpContext = { config, store, coordination: new LocalCoordination({ nodeId: 'test' }), logger: createLogger({ level: 'silent' }) };
    const unused = {} as never;
    const routes: RouteModule[] = [
      opsRoutes({ readiness: () => ({}), metrics: new Metrics({ processMetrics: false }), sources: NO_SOURCES, defaultPools: DEFAULT_POOLS }),
      channelRoutes(unused),
      domainRoutes(unused),
      sendRoutes(unused),
      suppressionRoutes,
      activityRoutes,
      statisticsRoutes(unused),
      webhookRoutes(unused),
    ];
    for (const register of routes) register(app, ctx);
    const res = await app.inject({ method: 'GET', url: '/openapi.json' });
    expect(res.statusCode).toBe(200);
    doc = res.json();
  });

  afterAll(async () => {
    await app?.close();
  });

  it('is an OpenAPI 3.1 document with the service title and a bearer security scheme', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info).toEqual({ title: 'postrider Email Delivery Service API', version: '1.0.0' });
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.security).toEqual([{ bearerAuth: [] }]);
  });

  it('documents every registered route except itself', () => {
    const documented = new Set<string>();
    for (const [p, item] of Object.entries<any>(doc.paths)) for (const m of Object.keys(item)) documented.add(`${m.toUpperCase()} ${p}`);
    const expected = declared
      .filter((r) => r.url !== '/openapi.json')
      .map((r) => `${r.method} ${r.url.replace(/:([A-Za-z0-9_]+)/g, '{$1}')}`);
    expect(expected.length).toBeGreaterThan(10);
    expect(expected.filter((r) => !documented.has(r))).toEqual([]);
    expect(documented.has('GET /openapi.json')).toBe(false);
    for (const p of ['/channels', '/channels/{id}', '/webhooks', '/webhooks/{id}', '/webhooks/{id}/regenerate-signing-key', '/health', '/ready', '/metrics', '/send/transactional', '/errors/{code}']) {
      expect(Object.keys(doc.paths)).toContain(p);
    }
  });

  it('takes request bodies and query parameters from the validation schemas', () => {
    const create = doc.paths['/channels'].post.requestBody.content['application/json'].schema;
    expect(create).toMatchObject({ type: 'object', additionalProperties: false, required: ['name'] });
    expect(create.properties.name).toMatchObject({ minLength: 1, maxLength: 100 });
    const names = doc.paths['/channels'].get.parameters.map((p: any) => `${p.in}:${p.name}`);
    expect(names).toEqual(expect.arrayContaining(['query:limit', 'query:offset', 'query:name', 'query:channelIds', 'query:deliveryType']));
  });

  it('declares every path template parameter, as OpenAPI requires', () => {
    for (const [p, item] of Object.entries<any>(doc.paths)) {
      const templated = [...p.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
      for (const [method, op] of Object.entries<any>(item)) {
        const declaredParams = (op.parameters ?? []).filter((x: any) => x.in === 'path');
        for (const name of templated) {
          expect(declaredParams.find((x: any) => x.name === name), `${method} ${p} {${name}}`).toMatchObject({ required: true });
        }
      }
    }
  });

  it('marks the public routes as needing no credential and the others as needing the bearer key', () => {
    for (const p of ['/health', '/ready', '/metrics', '/errors/{code}']) expect(doc.paths[p].get.security).toEqual([]);
    expect(doc.paths['/channels'].post.security).toBeUndefined();
  });
});
