import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { Daemon } from '../../src/daemon.js';
import { unavailableError } from '../../src/domain/database-unavailable.js';
import { createLogger } from '../../src/log/logger.js';
import { startDaemon, type ApiResponse, type TestDaemon } from '../support/daemon.js';
import { newAccount } from '../support/domains.js';
import { testStoreOverrides } from '../support/store.js';
import { waitFor } from '../support/wait.js';

let t: TestDaemon;

beforeAll(async () => {
  t = await startDaemon();
});

afterAll(async () => {
  await t?.stop();
});

async function createChannel(name: string, key?: string, d: TestDaemon = t): Promise<{ id: string; name: string }> {
  const res = await d.api('POST', '/channels', { key, body: { name } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

/** Checks the problem+json shape of spec section 7 and returns the body. */
function expectProblem(res: ApiResponse, status: number, code: string, instance: string): any {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(res.body).toEqual({
    // No publicUrl is configured: links follow the port the API bound.
    type: `${t.url}/errors/${code}`,
    title: expect.any(String),
    instance,
    status,
    code,
    detail: expect.any(String),
    requestId: res.headers.get('x-request-id'),
  });
  expect(res.body.title.length).toBeGreaterThan(0);
  expect(res.body.detail.length).toBeGreaterThan(0);
  expect(res.body.requestId).toMatch(/^[0-9a-f-]{36}$/);
  return res.body;
}

describe('bearer authentication', () => {
  it('answers 401 without an Authorization header and asks for a bearer token', async () => {
    const res = await t.api('GET', '/channels', { key: null });
    expectProblem(res, 401, 'unauthorized', 'GET /channels');
    expect(res.headers.get('www-authenticate')).toBe('Bearer');
  });

  it('answers 401 for another scheme or a malformed bearer header', async () => {
    const wrong = [`Basic ${t.apiKey}`, `Basic ${Buffer.from('api:' + t.apiKey).toString('base64')}`, `Token ${t.apiKey}`, 'Bearer', `Bearer ${t.apiKey} extra`, t.apiKey];
    for (const authorization of wrong) {
      const res = await t.api('GET', '/channels', { key: null, headers: { authorization } });
      expect(res.status, authorization).toBe(401);
      expect(res.body.code).toBe('unauthorized');
    }
  });

  it('accepts the bearer scheme in any letter case', async () => {
    expect((await t.api('GET', '/channels', { key: null, headers: { authorization: `bearer ${t.apiKey}` } })).status).toBe(200);
  });

  it('answers an unknown key with a 401 problem whose requestId is the X-Request-Id header', async () => {
    const res = await t.api('GET', '/channels', { key: 'pr_thisIsNotAKeyThisIsNotAKeyXXXXXX' });
    const problem = expectProblem(res, 401, 'unauthorized', 'GET /channels');
    expect(problem.title).toBe('Invalid credential');
    expect(res.headers.get('www-authenticate')).toContain('invalid_token');
    const other = await t.api('GET', '/channels', { key: 'garbage' });
    expect(other.status).toBe(401);
    expect(other.body.requestId).not.toBe(problem.requestId);
  });

  it('does not reveal whether a channel exists to a caller without a valid key', async () => {
    const channel = await createChannel('hidden');
    expect((await t.api('GET', `/channels/${channel.id}`, { key: null })).status).toBe(401);
    expect((await t.api('GET', '/channels/00000000-0000-4000-8000-000000000000', { key: 'pr_nope' })).status).toBe(401);
    expect((await t.api('DELETE', `/channels/${channel.id}`, { key: 'pr_nope' })).status).toBe(401);
    expect((await t.api('GET', `/channels/${channel.id}`)).status).toBe(200);
  });

  it('answers 401 for a key once it is revoked', async () => {
    const { key, token } = await t.daemon.store.apiKeys.create({ accountId: t.accountId, channelId: null });
    expect((await t.api('GET', '/channels', { key: token })).status).toBe(200);
    await t.daemon.store.apiKeys.revoke(key.id);
    expectProblem(await t.api('GET', '/channels', { key: token }), 401, 'unauthorized', 'GET /channels');
    expect((await t.api('GET', '/channels')).status).toBe(200);
  });

  it('sends X-Request-Id on successful answers too, different for every request', async () => {
    const a = await t.api('GET', '/channels');
    const b = await t.api('GET', '/channels');
    expect(a.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(a.headers.get('x-request-id')).not.toBe(b.headers.get('x-request-id'));
  });

  it('ignores a request id sent by the client', async () => {
    const res = await t.api('GET', '/channels', { headers: { 'x-request-id': 'client-chosen' } });
    expect(res.headers.get('x-request-id')).not.toBe('client-chosen');
  });
});

describe('accounts are isolated', () => {
  let foreignKey: string;
  let mine: { id: string; name: string };

  beforeAll(async () => {
    ({ key: foreignKey } = await newAccount(t));
    mine = await createChannel('first account only');
  });

  it('answers 403 to another account\'s key on GET, PATCH and DELETE of a channel, and changes nothing', async () => {
    expectProblem(await t.api('GET', `/channels/${mine.id}`, { key: foreignKey }), 403, 'forbidden', `GET /channels/${mine.id}`);
    expectProblem(await t.api('PATCH', `/channels/${mine.id}`, { key: foreignKey, body: { name: 'stolen' } }), 403, 'forbidden', `PATCH /channels/${mine.id}`);
    expectProblem(await t.api('DELETE', `/channels/${mine.id}`, { key: foreignKey }), 403, 'forbidden', `DELETE /channels/${mine.id}`);
    const still = await t.api('GET', `/channels/${mine.id}`);
    expect(still.status).toBe(200);
    expect(still.body.name).toBe('first account only');
  });

  it('never lists another account\'s channels, not even when asked for them by id', async () => {
    const theirs = await createChannel('second account channel', foreignKey);
    const list = await t.api('GET', '/channels?limit=500', { key: foreignKey });
    expect(list.body.results.map((c: any) => c.id)).toEqual([theirs.id]);
    expect(list.body.totalCount).toBe(1);
    const byId = await t.api('GET', `/channels?channelIds=${mine.id}`, { key: foreignKey });
    expect(byId.body).toEqual({ results: [], totalCount: 0 });
    const byName = await t.api('GET', '/channels?name=first%20account', { key: foreignKey });
    expect(byName.body).toEqual({ results: [], totalCount: 0 });
    const own = await t.api('GET', '/channels?limit=500');
    expect(own.body.results.map((c: any) => c.id)).not.toContain(theirs.id);
  });
});

describe('channel-level keys', () => {
  let own: { id: string };
  let sibling: { id: string };
  let channelKey: string;

  beforeAll(async () => {
    own = await createChannel('own');
    sibling = await createChannel('sibling');
    channelKey = (await t.daemon.store.apiKeys.create({ accountId: t.accountId, channelId: own.id })).token;
  });

  it('list only their own channel', async () => {
    const list = await t.api('GET', '/channels?limit=500', { key: channelKey });
    expect(list.status).toBe(200);
    expect(list.body.results.map((c: any) => c.id)).toEqual([own.id]);
    expect(list.body.totalCount).toBe(1);
    expect((await t.api('GET', `/channels?channelIds=${sibling.id}`, { key: channelKey })).body).toEqual({ results: [], totalCount: 0 });
    expect((await t.api('GET', `/channels?channelIds=${sibling.id},${own.id}`, { key: channelKey })).body.totalCount).toBe(1);
  });

  it('read their own channel and get 403 on a sibling channel', async () => {
    const get = await t.api('GET', `/channels/${own.id}`, { key: channelKey });
    expect(get.status).toBe(200);
    expect(get.body.id).toBe(own.id);
    expectProblem(await t.api('GET', `/channels/${sibling.id}`, { key: channelKey }), 403, 'forbidden', `GET /channels/${sibling.id}`);
  });

  it('may not create, update or delete channels, their own included', async () => {
    expectProblem(await t.api('POST', '/channels', { key: channelKey, body: { name: 'nope' } }), 403, 'forbidden', 'POST /channels');
    for (const id of [own.id, sibling.id]) {
      expect((await t.api('PATCH', `/channels/${id}`, { key: channelKey, body: { name: 'renamed' } })).status).toBe(403);
      expect((await t.api('DELETE', `/channels/${id}`, { key: channelKey })).status).toBe(403);
    }
    expect((await t.api('GET', `/channels/${own.id}`)).body.name).toBe('own');
    expect((await t.api('GET', `/channels/${sibling.id}`)).status).toBe(200);
  });

  it('stop working when their channel is deleted', async () => {
    const doomed = await createChannel('doomed');
    const { token } = await t.daemon.store.apiKeys.create({ accountId: t.accountId, channelId: doomed.id });
    expect((await t.api('GET', '/channels', { key: token })).status).toBe(200);
    expect((await t.api('DELETE', `/channels/${doomed.id}`)).status).toBe(204);
    expectProblem(await t.api('GET', '/channels', { key: token }), 401, 'unauthorized', 'GET /channels');
    expect(await t.daemon.store.apiKeys.list({ channelId: doomed.id })).toEqual([]);
    // The keys of other channels and the account key are untouched.
    expect((await t.api('GET', '/channels', { key: channelKey })).status).toBe(200);
  });
});

describe('malformed requests', () => {
  it('answers broken JSON with 400 invalid_json', async () => {
    const res = await t.api('POST', '/channels', { rawBody: '{"name": "x",' });
    const problem = expectProblem(res, 400, 'invalid_json', 'POST /channels');
    expect(problem.title).toBe('Malformed JSON body');
  });

  it('answers an empty JSON body with 400 invalid_json', async () => {
    expectProblem(await t.api('POST', '/channels', { rawBody: '' }), 400, 'invalid_json', 'POST /channels');
  });

  it('answers a body that is not JSON with 415', async () => {
    for (const type of ['application/x-www-form-urlencoded', 'text/plain', 'application/xml']) {
      const res = await t.api('POST', '/channels', { rawBody: 'name=x', headers: { 'content-type': type } });
      expectProblem(res, 415, 'unsupported_media_type', 'POST /channels');
    }
  });

  it('accepts JSON with a charset parameter', async () => {
    const res = await t.api('POST', '/channels', { rawBody: '{"name":"charset"}', headers: { 'content-type': 'application/json; charset=utf-8' } });
    expect(res.status).toBe(200);
  });

  it('answers an unknown route with 404 not_found in the same problem shape', async () => {
    const res = await t.api('GET', '/nothing/here?x=1');
    const problem = expectProblem(res, 404, 'not_found', 'GET /nothing/here');
    expect(problem.detail).toContain('/nothing/here');
    expectProblem(await t.api('PUT', '/nothing/here', { body: {} }), 404, 'not_found', 'PUT /nothing/here');
  });

  it('serves the description of an error code at the problem type link without a key', async () => {
    const problem = (await t.api('GET', '/channels', { key: null })).body;
    const link = new URL(problem.type);
    const res = await t.api('GET', link.pathname, { key: null });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ code: 'unauthorized', status: 401, title: 'Invalid credential' });
    expectProblem(await t.api('GET', '/errors/no_such_code', { key: null }), 404, 'not_found', 'GET /errors/no_such_code');
  });
});

describe('the request rate limit', () => {
  let limited: TestDaemon;

  beforeAll(async () => {
    limited = await startDaemon({ 'api.rateLimit': 3 });
  });

  afterAll(async () => {
    await limited?.stop();
  });

  it('answers the 4th request within the window with 429, Retry-After and RateLimit headers', async () => {
    for (const remaining of [2, 1, 0]) {
      const ok = await limited.api('GET', '/channels');
      expect(ok.status).toBe(200);
      expect(ok.headers.get('ratelimit-limit')).toBe('3');
      expect(ok.headers.get('ratelimit-remaining')).toBe(String(remaining));
      expect(Number(ok.headers.get('ratelimit-reset'))).toBeGreaterThanOrEqual(1);
    }
    const res = await limited.api('GET', '/channels');
    expect(res.status).toBe(429);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(res.body).toMatchObject({ code: 'rate_limit_exceeded', status: 429, instance: 'GET /channels', requestId: res.headers.get('x-request-id') });
    const retryAfter = Number(res.headers.get('retry-after'));
    // 3 requests per 60 s: one comes back every 20 s (a little sooner when the requests were slow).
    expect(retryAfter).toBeGreaterThanOrEqual(10);
    expect(retryAfter).toBeLessThanOrEqual(20);
    expect(res.headers.get('ratelimit-limit')).toBe('3');
    expect(res.headers.get('ratelimit-remaining')).toBe('0');
    expect(Number(res.headers.get('ratelimit-reset'))).toBeGreaterThanOrEqual(1);
  });

  it('limits each API key on its own and does not count requests with a bad key', async () => {
    const { token } = await limited.daemon.store.apiKeys.create({ accountId: limited.accountId, channelId: null });
    for (let i = 0; i < 5; i++) expect((await limited.api('GET', '/channels', { key: 'pr_invalid' })).status).toBe(401);
    for (let i = 0; i < 3; i++) expect((await limited.api('GET', '/channels', { key: token })).status).toBe(200);
    expect((await limited.api('GET', '/channels', { key: token })).status).toBe(429);
  });
});

describe('the invalid-key limit per client address', () => {
  let d: TestDaemon;

  beforeAll(async () => {
    d = await startDaemon({ 'api.authFailureLimit': 4 });
  });

  afterAll(async () => {
    await d?.stop();
  });

  it('answers 429 with Retry-After after the limit of bad keys, while a valid key from the same address still works', async () => {
    for (let i = 0; i < 4; i++) expect((await d.api('GET', '/channels', { key: `pr_guess${i}` })).status).toBe(401);
    const limited = await d.api('GET', '/channels', { key: 'pr_guess-more' });
    expect(limited.status).toBe(429);
    expect(limited.body).toMatchObject({ code: 'rate_limit_exceeded', status: 429 });
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // The right key is not slowed down, nor is a request with no credential counted.
    expect((await d.api('GET', '/channels')).status).toBe(200);
    expect((await d.api('GET', '/channels', { key: null })).status).toBe(401);
  });
});

describe('a store out of reach during authentication', () => {
  let d: TestDaemon;

  beforeAll(async () => {
    d = await startDaemon({ 'api.authFailureLimit': 2 });
  });

  afterAll(async () => {
    vi.restoreAllMocks();
    await d?.stop();
  });

  it('answers 503 store_unavailable every time and counts nothing against the invalid-key limit (found by the cluster test, issue 32)', async () => {
    const lookup = vi.spyOn(d.daemon.store.apiKeys, 'findByToken').mockRejectedValue(unavailableError(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })));
    for (let i = 0; i < 5; i++) {
      const res = await d.api('GET', '/channels');
      expect(res.status, JSON.stringify(res.body)).toBe(503);
      expect(res.body).toMatchObject({ code: 'store_unavailable' });
    }
    lookup.mockRestore();
    // The address's bucket is whole: a wrong key is 401 up to the limit, not 429 at once.
    expect((await d.api('GET', '/channels', { key: 'pr_guess' })).status).toBe(401);
    expect((await d.api('GET', '/channels')).status).toBe(200);
  });
});

describe('the body size limit', () => {
  let small: TestDaemon;

  beforeAll(async () => {
    small = await startDaemon({ 'http.bodyLimit': 2048 });
  });

  afterAll(async () => {
    await small?.stop();
  });

  it('answers a body larger than http.bodyLimit with 413 and accepts one below it', async () => {
    const res = await small.api('POST', '/channels', { rawBody: JSON.stringify({ name: 'x', pad: 'y'.repeat(3000) }) });
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({ code: 'payload_too_large', status: 413, instance: 'POST /channels' });
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect((await small.api('POST', '/channels', { body: { name: 'z'.repeat(100) } })).status).toBe(200);
  });
});

describe('logs', () => {
  it('never contain an API key, valid or not', async () => {
    const lines: string[] = [];
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-logs-'));
    const config = loadConfig({
      env: {},
      overrides: { dataDir, ...testStoreOverrides(dataDir), 'http.port': 0, 'log.level': 'trace', 'smtp.enabled': false, 'delivery.enabled': false },
    });
    const daemon = new Daemon(config, createLogger({ level: 'trace', destination: { write: (s: string) => void lines.push(s) } }));
    await daemon.start();
    try {
      const key = daemon.initialCredentials!.apiKey;
      const wrong = 'pr_wrongwrongwrongwrongwrongwrongwrong';
      const url = `http://127.0.0.1:${daemon.http.port}`;
      const call = (method: string, p: string, token: string, body?: unknown) =>
        fetch(url + p, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
      expect((await call('POST', '/channels', key, { name: 'logged' })).status).toBe(200);
      expect((await call('GET', '/channels', key)).status).toBe(200);
      expect((await call('POST', '/channels', key, { name: '' })).status).toBe(422);
      expect((await call('GET', '/channels', wrong)).status).toBe(401);
      expect((await call('GET', '/no/route', key)).status).toBe(404);
      // Sentinel: each request's own line, written when its response is done, comes after
      // anything else logged about it.
      await waitFor(() => lines.filter((l) => l.includes('"msg":"request"')).length === 5, { what: 'the five request lines' });
      const log = lines.join('');
      // The requests were logged at all, so the check below looks at real log lines.
      expect(log).toContain('"path":"/channels"');
      for (const secret of [key, wrong, key.slice(3), wrong.slice(3)]) expect(log).not.toContain(secret);
    } finally {
      await daemon.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
