/**
 * Who may use the operator routes (GET /ops/sources; http/operator-access.ts), over a real
 * HttpServer (auth hook, error handler) and a real store: the metrics token, a loopback client
 * without a token, and an account-level key or dashboard session of an account named in
 * metrics.operatorAccounts; another account's key, a channel key, a session without the
 * dashboard header and no credential at all are refused.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { LocalCoordination } from '../../src/coordination/local.js';
import { opsRoutes } from '../../src/http/routes/ops.js';
import { HttpServer } from '../../src/http/server.js';
import { createLogger } from '../../src/log/logger.js';
import { Metrics } from '../../src/log/metrics.js';
import { openSession } from '../../src/sessions/service.js';
import type { StorePort } from '../../src/store/port/index.js';
import { openStore } from '../support/store.js';

const TOKEN = 'ops-operator-token-0123456789';
const KERNEL = { name: 'kernel', address: null, ehloName: 'mta.test', rate: null, pools: [{ pool: 'default', weight: 1 }], ptr: { status: 'not_checked' as const, ptrNames: [], forwardAddresses: [] } };

let dataDir: string;
let store: StorePort;
const servers: HttpServer[] = [];
const keys = { operator: '', operatorChannel: '', tenant: '' };
let operatorAccount = '';
let operatorSession = '';
let tenantSession = '';

async function startServer(overrides: Record<string, unknown>): Promise<HttpServer> {
  const config = loadConfig({ env: {}, overrides: { dataDir, 'http.port': 0, 'log.level': 'silent', 'metrics.operatorAccounts': [operatorAccount], ...overrides } });
  const routes = opsRoutes({ readiness: () => ({}), metrics: new Metrics({ processMetrics: false }), sources: { list: async () => [KERNEL] }, defaultPools: { transactional: 'default', broadcast: 'bulk' } });
  const http = new HttpServer({ config, store, coordination: new LocalCoordination({ nodeId: 'test' }), logger: createLogger({ level: 'silent' }) }, [routes]);
  await http.start();
  servers.push(http);
  return http;
}

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-ops-access-'));
  store = await openStore(dataDir);
  const operator = await store.accounts.create({ name: 'operator', state: 'active' });
  const tenant = await store.accounts.create({ name: 'tenant', state: 'active' });
  operatorAccount = operator.id;
  const channel = await store.channels.create({ accountId: operator.id, name: 'receipts', deliveryType: 'live', tracking: { links: false, opens: false }, maxPerAccount: 10 });
  keys.operator = (await store.apiKeys.create({ accountId: operator.id, channelId: null, name: 'ops' })).token;
  keys.operatorChannel = (await store.apiKeys.create({ accountId: operator.id, channelId: channel.id, name: 'channel' })).token;
  keys.tenant = (await store.apiKeys.create({ accountId: tenant.id, channelId: null, name: 'tenant' })).token;
  operatorSession = (await openSession(store, keys.operator)).token;
  tenantSession = (await openSession(store, keys.tenant)).token;
});

afterAll(async () => {
  for (const s of servers) await s.stop();
  await store.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

async function sources(http: HttpServer, headers: Record<string, string> = {}) {
  const res = await fetch(`http://127.0.0.1:${http.port}/ops/sources`, { headers });
  return { status: res.status, body: (await res.json()) as { code?: string; detail?: string; results?: unknown[]; defaultPools?: unknown } };
}

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
const dashboard = (session: string) => ({ cookie: `postrider_session=${session}`, 'x-postrider-dashboard': '1' });

describe('GET /ops/sources with metrics.token and metrics.operatorAccounts', () => {
  let http: HttpServer;
  beforeAll(async () => {
    http = await startServer({ 'metrics.token': TOKEN });
  });

  it('answers the metrics token, with the default pools of each mail type', async () => {
    const res = await sources(http, bearer(TOKEN));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ results: [KERNEL], defaultPools: { transactional: 'default', broadcast: 'bulk' } });
  });

  it("answers an operator account's account-level key and its dashboard session", async () => {
    expect((await sources(http, bearer(keys.operator))).status).toBe(200);
    const viaSession = await sources(http, dashboard(operatorSession));
    expect(viaSession.status).toBe(200);
    expect(viaSession.body.results).toEqual([KERNEL]);
  });

  it("refuses another account's key and session, and the operator account's channel key (403)", async () => {
    for (const headers of [bearer(keys.tenant), dashboard(tenantSession), bearer(keys.operatorChannel)]) {
      const res = await sources(http, headers);
      expect(res.status).toBe(403);
      expect(res.body.code).toBe('forbidden');
    }
    expect((await sources(http, bearer(keys.tenant))).body.detail).toMatch(/metrics\.operatorAccounts/);
  });

  it('refuses no credential, an unknown key, and a session cookie without the dashboard header (401)', async () => {
    for (const headers of [{} as Record<string, string>, bearer('pr_not-a-key-of-anyone'), { cookie: `postrider_session=${operatorSession}` }]) {
      const res = await sources(http, headers);
      expect(res.status).toBe(401);
      expect(res.body.code).toBe('unauthorized');
    }
  });
});

describe('GET /ops/sources without a token', () => {
  let http: HttpServer;
  beforeAll(async () => {
    http = await startServer({});
  });

  it('answers a loopback client without a credential', async () => {
    expect((await sources(http)).status).toBe(200);
  });

  it("answers a remote client with an operator's session only", async () => {
    const app = http.build();
    try {
      const remote = (headers: Record<string, string>) => app.inject({ method: 'GET', url: '/ops/sources', remoteAddress: '203.0.113.9', headers });
      expect((await remote({})).statusCode).toBe(403);
      expect((await remote(dashboard(operatorSession))).statusCode).toBe(200);
      expect((await remote(dashboard(tenantSession))).statusCode).toBe(403);
    } finally {
      await app.close();
    }
  });
});
