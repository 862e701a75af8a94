/**
 * The OpenAPI document against the routes of a real daemon: every route fastify registered is
 * documented with an operationId, a summary and every error response, problems as
 * application/problem+json. Every answer the integration suites receive through apiRequest is
 * checked against the same document (test/support/openapi-check.ts); the last test here calls
 * every documented operation without a key and with a broken body, as a floor of that check.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATIONS } from '../../src/http/contract.js';
import { channelDetailBody } from '../../src/http/response-schemas.js';
import { channelDetail } from '../../src/http/routes/channels.js';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import { checkAgainstDocument } from '../support/openapi-check.js';

let t: TestDaemon;
let doc: any;

/** "METHOD /path/{param}" of every route the daemon's fastify instance holds (HEAD aside). */
function registeredRoutes(app: FastifyInstance): string[] {
  const out: string[] = [];
  const stack: string[] = [];
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const m = /^([│ ]*)[├└]── (\S+) \(([^)]+)\)$/.exec(line);
    if (!m) continue;
    const depth = m[1].length / 4;
    stack.length = depth;
    stack.push(m[2]);
    const path = stack.join('').replace(/:([A-Za-z0-9_]+)/g, '{$1}');
    for (const method of m[3].split(', ')) if (method !== 'HEAD') out.push(`${method} ${path}`);
  }
  return out;
}

function documented(): string[] {
  return Object.entries<any>(doc.paths).flatMap(([p, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${p}`));
}

beforeAll(async () => {
  t = await startDaemon();
  doc = (await t.api('GET', '/openapi.json')).body;
});

afterAll(async () => {
  await t?.stop();
});

describe('the OpenAPI document', () => {
  it('documents every route the daemon registered, and only those', () => {
    // The dashboard's files and the root that redirects to them (routes/dashboard.ts), a message's HTML and a template's preview
    // (saved or not) for their iframes (routes/dashboard-message-html.ts, dashboard-template-html.ts, dashboard-template-draft-html.ts)
    // and the settings it shows to copy (routes/dashboard-settings.ts) are the web app, not API operations.
    const app = [
      'GET /openapi.json',
      'GET /',
      'GET /dashboard',
      'GET /dashboard*',
      'GET /dashboard/messages/{id}/html',
      'GET /dashboard/templates/{idOrAlias}/html',
      'POST /dashboard/templates/preview-html',
      'GET /dashboard/settings',
    ];
    const routes = registeredRoutes((t.daemon.http as unknown as { app: FastifyInstance }).app).filter((r) => !app.includes(r));
    expect(routes.length).toBeGreaterThan(40);
    expect(routes.filter((r) => !documented().includes(r))).toEqual([]);
    expect(documented().filter((r) => !routes.includes(r))).toEqual([]);
    expect(Object.keys(OPERATIONS).sort()).toEqual([...routes].sort());
  });

  it('gives every operation a unique operationId and a summary', () => {
    const ids = Object.values<any>(doc.paths).flatMap((item) => Object.values<any>(item).map((op) => op.operationId));
    expect(ids.every((id) => typeof id === 'string' && id.length > 0)).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    for (const item of Object.values<any>(doc.paths)) for (const op of Object.values<any>(item)) expect(op.summary, op.operationId).toBeTruthy();
  });

  it('documents the errors of every operation as problem+json with the problem schema and X-Request-Id', () => {
    for (const [p, item] of Object.entries<any>(doc.paths)) {
      for (const [m, op] of Object.entries<any>(item)) {
        const statuses = Object.keys(op.responses).map(Number);
        expect(statuses, `${m} ${p}`).toEqual(expect.arrayContaining([400, 500, 503]));
        if (op.security === undefined) expect(statuses, `${m} ${p}`).toEqual(expect.arrayContaining([401, 403, 429]));
        if (m !== 'get' && op.security === undefined) expect(statuses, `${m} ${p}`).toEqual(expect.arrayContaining([413, 415, 507]));
        for (const status of statuses.filter((s) => s >= 400 && !(p === '/ready' && s === 503))) {
          expect(op.responses[status].content['application/problem+json'].schema, `${m} ${p} ${status}`).toEqual({ $ref: '#/components/schemas/Problem' });
          expect(op.responses[status].headers['X-Request-Id'], `${m} ${p} ${status}`).toBeDefined();
        }
        if (statuses.includes(429)) expect(op.responses[429].headers['Retry-After']).toBeDefined();
      }
    }
    expect(doc.components.schemas.Problem.required).toEqual(expect.arrayContaining(['type', 'title', 'status', 'code', 'detail', 'instance', 'requestId']));
  });

  it('documents DELETE as 204 without a body, and the rate-limit headers of authenticated answers', () => {
    for (const p of ['/channels/{id}', '/domains/{id}', '/webhooks/{id}']) {
      expect(Object.keys(doc.paths[p].delete.responses)).not.toContain('200');
      expect(doc.paths[p].delete.responses[204].content).toBeUndefined();
      expect(Object.keys(doc.paths[p].delete.responses[204].headers)).toEqual(expect.arrayContaining(['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'Cache-Control']));
    }
    expect(Object.keys(doc.paths['/activity/events'].get.responses[200].headers)).toEqual(expect.arrayContaining(['X-Total-Count-Estimated', 'X-Page-Partial']));
  });

  it('documents ids as UUIDs and comma-separated lists as arrays with their enumerations', () => {
    const param = (p: string, m: string, name: string) => doc.paths[p][m].parameters.find((x: any) => x.name === name);
    for (const p of ['/channels/{id}', '/domains/{id}', '/webhooks/{id}', '/broadcasts/{id}', '/activity/messages/{id}']) {
      expect(param(p, 'get', 'id').schema.format, p).toBe('uuid');
    }
    expect(param('/activity/events', 'get', 'channelId').schema.format).toBe('uuid');
    expect(param('/activity/events', 'get', 'eventTypes')).toMatchObject({ style: 'form', explode: false, schema: { type: 'array', items: { enum: expect.arrayContaining(['delivered', 'bounced']) } } });
    expect(param('/statistics/totals', 'get', 'tags').schema.items.pattern).toBe('^[A-Za-z0-9_-]*$');
    expect(param('/channels', 'get', 'channelIds').schema).toEqual({ type: 'array', items: { type: 'string', format: 'uuid' } });
  });

  it('documents the channel and idempotency headers under all their names on the send operations', () => {
    for (const p of ['/send/transactional', '/send/transactional/batch', '/send/broadcast', '/send/broadcast/message']) {
      const names = doc.paths[p].post.parameters.filter((x: any) => x.in === 'header').map((x: any) => x.name.toLowerCase());
      expect(names, p).toEqual(expect.arrayContaining(['x-service-channel-id', 'x-helo-channel-id', 'idempotency-key', 'x-service-idempotency-key', 'x-helo-idempotency-key']));
    }
  });

  it('documents the optional rotate-key body, and no body for the bodiless POSTs', () => {
    const rotate = doc.paths['/domains/{id}/rotate-key'].post.requestBody;
    expect(rotate.required).toBe(false);
    // null as the field's absence (null-fields.ts), as in every body.
    expect(rotate.content['application/json'].schema.properties.dkimAlgorithm.enum).toEqual(['rsa', 'ed25519', null]);
    for (const p of ['/domains/{id}/verify', '/broadcasts/{id}/cancel', '/webhooks/{id}/regenerate-signing-key']) expect(doc.paths[p].post.requestBody, p).toBeUndefined();
  });

  it('documents a batch entry as the body of a single send, though the route checks each entry in the handler', () => {
    const body = (p: string) => doc.paths[p].post.requestBody.content['application/json'].schema;
    const requests = body('/send/transactional/batch').properties.requests;
    expect(requests).toMatchObject({ type: 'array', minItems: 1, maxItems: 500 });
    expect(requests.items).toEqual(body('/send/transactional'));
    expect(requests.items.required).toEqual(['from', 'to']);
  });

  it('lists every field of the channel answer in the schema the channel routes serialize with', () => {
    const channel = { id: 'i', accountId: 'a', name: 'n', deliveryType: 'live', tracking: { links: true, opens: false }, createdAt: 'c', updatedAt: 'u' } as const;
    expect(Object.keys(channelDetail(channel)).sort()).toEqual(Object.keys((channelDetailBody as { properties: object }).properties).sort());
  });

  it('answers every documented operation without a key, with a bad key and with a broken body as documented', async () => {
    // t.api checks each answer against the document: a status it does not list, or a body its
    // schema refuses, throws here.
    const id = '00000000-0000-4000-8000-000000000000';
    for (const [p, item] of Object.entries<any>(doc.paths)) {
      for (const m of Object.keys(item)) {
        const url = p.replace('{id}', id).replace('{code}', 'not_found');
        await t.api(m.toUpperCase(), url, { key: null });
        await t.api(m.toUpperCase(), url, { key: 'pr_not_a_key' });
        if (m !== 'get') await t.api(m.toUpperCase(), url, { rawBody: '{"broken', headers: { 'content-type': 'application/json' } });
        if (m !== 'get') await t.api(m.toUpperCase(), url, { rawBody: 'text', headers: { 'content-type': 'text/plain' } });
        await t.api(m.toUpperCase(), url);
      }
    }
  });

  it('is held against by a check that refuses an undocumented status, body or media type', async () => {
    const answer = { method: 'DELETE', urlPath: '/channels/x', status: 204, contentType: null, body: null };
    await expect(checkAgainstDocument(t.url, answer)).resolves.toBeUndefined();
    await expect(checkAgainstDocument(t.url, { ...answer, status: 200 })).rejects.toThrow(/status 200 is not documented/);
    const problem = { ...answer, status: 404, contentType: 'application/problem+json' };
    await expect(checkAgainstDocument(t.url, { ...problem, body: { code: 'not_found' } })).rejects.toThrow(/does not match/);
    await expect(checkAgainstDocument(t.url, { ...problem, contentType: 'text/html', body: '<p>' })).rejects.toThrow(/media type/);
    await expect(checkAgainstDocument(t.url, { ...answer, urlPath: '/nowhere', status: 200 })).rejects.toThrow(/no documented operation/);
  });
});
