/**
 * Tenant isolation matrix. Every authenticated operation the daemon itself lists in
 * /openapi.json is called with keys that must not reach account A's resources: another
 * account's account-level and channel-level keys, and a key of A's own other channel.
 * Aimed at one of A's resources (by path id, query filter, body field or channel header) the
 * answer must be 403 (DESIGN.md), never 2xx; a list filtered to A's ids may answer 200 but must
 * not contain them. Afterwards A's resources are unchanged. A positive control runs the same
 * reads with A's own keys, so a matrix of blanket refusals could not pass.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemonWithDns, stopDaemonWithDns, type ApiResponse, type TestDaemon } from '../support/daemon.js';
import type { TestDns } from '../support/dns-server.js';
import { newAccount } from '../support/domains.js';
import { setupSender } from '../support/sending.js';

interface Tenant {
  accountKey: string;
  /** The id of accountKey (GET /api-keys). */
  accountKeyId: string;
  channel: string;
  channelKey: string;
  domain: string;
  domainId: string;
  webhook: string;
  /** An inbound route on the tenant's domain. */
  route: string;
  template: string;
  /** A message received for that route. */
  inbound: string;
  message: string;
  broadcast: string;
}

interface Call {
  method: string;
  path: string;
  body?: unknown;
  headers?: Record<string, string>;
  /** A list that may answer 200 without the victim's resources, instead of 403. */
  list?: boolean;
}

let dns: TestDns;
let t: TestDaemon;
let a: Tenant;
let b: Tenant;
/** A key of account A bound to A's second channel. */
let sibling: { channel: string; key: string };
let operations: string[];

const HOOK_URL = 'http://127.0.0.1:9/hook';
const SUPPRESSED = 'kept-suppressed@example.net';

async function tenant(accountKey: string): Promise<Tenant> {
  // Verified: an inbound route needs a verified domain.
  const s = await setupSender(t, dns, { deliveryType: 'sandbox', key: accountKey });
  const channelKey = (await createKeyFor(accountKey, s.channelId)).token;
  const hook = await t.api('POST', '/webhooks', { key: accountKey, body: { url: HOOK_URL, events: ['complained'], channelId: s.channelId } });
  expect(hook.status, JSON.stringify(hook.body)).toBe(200);
  const route = await t.api('POST', '/inbound/routes', { key: accountKey, body: { channelId: s.channelId, address: `support@${s.domain}`, url: HOOK_URL } });
  expect(route.status, JSON.stringify(route.body)).toBe(200);
  const tpl = await t.api('POST', '/templates', { key: accountKey, body: { name: 'private', subject: 'private', text: 'private {{x}}', channelIds: [s.channelId] } });
  expect(tpl.status, JSON.stringify(tpl.body)).toBe(200);
  const sent = await t.api('POST', '/send/transactional', {
    key: accountKey,
    headers: { 'x-service-channel-id': s.channelId },
    body: { from: { email: `app@${s.domain}` }, to: [{ email: 'ann@example.net' }], subject: 'private', text: 'private' },
  });
  expect(sent.status, JSON.stringify(sent.body)).toBe(200);
  const sup = await t.api('POST', '/suppressions', { key: accountKey, body: { channelId: s.channelId, mailType: 'transactional', emails: [SUPPRESSED] } });
  expect(sup.status).toBe(200);
  const broadcast = await t.api('POST', '/send/broadcast', {
    key: accountKey,
    headers: { 'x-service-channel-id': s.channelId },
    body: { from: { email: `app@${s.domain}` }, template: { subject: 'private', text: 'private' }, messages: [{ to: [{ email: 'ann@example.net' }] }] },
  });
  expect(broadcast.status, JSON.stringify(broadcast.body)).toBe(200);
  const keys = await t.api('GET', '/api-keys', { key: accountKey });
  const accountKeyId = (keys.body.results as Array<{ id: string; prefix: string }>).find((k) => accountKey.startsWith(k.prefix))!.id;
  const inbound = await receive({ accountId: accountKey === t.apiKey ? t.accountId : bAccountId, channelId: s.channelId, routeId: route.body.id, to: `support@${s.domain}` });
  return { accountKey, accountKeyId, channel: s.channelId, channelKey, domain: s.domain, domainId: s.domainId, webhook: hook.body.id, route: route.body.id, template: tpl.body.id, inbound, message: sent.body.messageId, broadcast: broadcast.body.broadcastId };
}

/** A message with one attachment, committed for the route as the inbound listener commits it (the listener is off here: it stays `received`). */
async function receive(o: { accountId: string; channelId: string; routeId: string; to: string }): Promise<string> {
  const raw = Buffer.from(
    [
      'From: Ann <ann@example.org>',
      `To: ${o.to}`,
      'Subject: private inbound',
      'MIME-Version: 1.0',
      'Content-Type: multipart/mixed; boundary="b"',
      '',
      '--b',
      'Content-Type: text/plain',
      '',
      'private',
      '--b',
      'Content-Type: text/plain; name="private.txt"',
      'Content-Disposition: attachment; filename="private.txt"',
      '',
      'private attachment',
      '--b--',
      '',
    ].join('\r\n'),
  );
  const [m] = await t.daemon.store.inboundMessages.commit({
    receivedAt: new Date(),
    raw,
    messages: [{ routeId: o.routeId, accountId: o.accountId, channelId: o.channelId, envelope: { mailFrom: 'ann@example.org', rcptTo: [o.to] }, clientAddress: '127.0.0.1', helo: 'client.example.org', mailboxHash: null, from: 'ann@example.org', subject: 'private inbound' }],
  });
  return m.id;
}

async function createKeyFor(accountKey: string, channelId: string) {
  const accountId = accountKey === t.apiKey ? t.accountId : bAccountId;
  return t.daemon.store.apiKeys.create({ accountId, channelId });
}

let bAccountId: string;

beforeAll(async () => {
  ({ t, dns } = await startDaemonWithDns({ 'webhooks.allowHttp': true, 'webhooks.allowPrivate': true }));
  a = await tenant(t.apiKey);
  const other = await newAccount(t);
  bAccountId = other.accountId;
  b = await tenant(other.key);
  const second = await t.api('POST', '/channels', { body: { name: 'a-second', deliveryType: 'sandbox' } });
  sibling = { channel: second.body.id, key: (await t.daemon.store.apiKeys.create({ accountId: t.accountId, channelId: second.body.id })).token };
  const doc = await t.api('GET', '/openapi.json', { key: null });
  expect(doc.status).toBe(200);
  operations = Object.entries(doc.body.paths as Record<string, Record<string, { security?: unknown[] }>>).flatMap(([path, ops]) =>
    Object.entries(ops)
      .filter(([, op]) => !(Array.isArray(op.security) && op.security.length === 0)) // public routes need no key
      .map(([method]) => `${method.toUpperCase()} ${path}`),
  );
});

afterAll(() => stopDaemonWithDns({ t, dns }));

/**
 * For every authenticated operation: the calls that aim at victim v's resources. A route that
 * is missing here fails the coverage test, so a new endpoint cannot skip the matrix.
 */
const MATRIX: Record<string, (v: Tenant) => Call[]> = {
  'GET /api-keys': () => [{ method: 'GET', path: '/api-keys?limit=500', list: true }],
  'POST /api-keys': (v) => [{ method: 'POST', path: '/api-keys', body: { channelId: v.channel } }],
  'DELETE /api-keys/{id}': (v) => [{ method: 'DELETE', path: `/api-keys/${v.accountKeyId}` }],
  'POST /channels': () => [{ method: 'POST', path: '/channels', body: { name: 'intruder' }, list: true }],
  'GET /channels': (v) => [{ method: 'GET', path: `/channels?channelIds=${v.channel}&limit=500`, list: true }, { method: 'GET', path: '/channels?limit=500', list: true }],
  'GET /channels/{id}': (v) => [{ method: 'GET', path: `/channels/${v.channel}` }],
  'PATCH /channels/{id}': (v) => [{ method: 'PATCH', path: `/channels/${v.channel}`, body: { name: 'stolen' } }],
  'DELETE /channels/{id}': (v) => [{ method: 'DELETE', path: `/channels/${v.channel}` }],
  'POST /domains': (v) => [{ method: 'POST', path: '/domains', body: { name: `steal-${Math.random().toString(36).slice(2, 8)}.com`, channelIds: [v.channel] } }],
  'GET /domains': (v) => [{ method: 'GET', path: `/domains?channelIds=${v.channel}&limit=500`, list: true }, { method: 'GET', path: '/domains?limit=500', list: true }],
  'GET /domains/{id}': (v) => [{ method: 'GET', path: `/domains/${v.domainId}` }],
  'PATCH /domains/{id}': (v) => [{ method: 'PATCH', path: `/domains/${v.domainId}`, body: { channelIds: [] } }],
  'DELETE /domains/{id}': (v) => [{ method: 'DELETE', path: `/domains/${v.domainId}` }],
  'POST /domains/{id}/verify': (v) => [{ method: 'POST', path: `/domains/${v.domainId}/verify` }],
  'POST /domains/{id}/rotate-key': (v) => [{ method: 'POST', path: `/domains/${v.domainId}/rotate-key` }],
  'POST /send/transactional': (v) => [
    {
      method: 'POST',
      path: '/send/transactional',
      headers: { 'x-service-channel-id': v.channel },
      body: { from: { email: `app@${v.domain}` }, to: [{ email: 'ann@example.net' }], subject: 'x', text: 'x' },
    },
  ],
  'POST /send/broadcast': (v) => [
    {
      method: 'POST',
      path: '/send/broadcast',
      headers: { 'x-service-channel-id': v.channel },
      body: { from: { email: `app@${v.domain}` }, template: { subject: 'x', text: 'x' }, messages: [{ to: [{ email: 'ann@example.net' }] }] },
    },
  ],
  'POST /send/transactional/batch': (v) => [
    {
      method: 'POST',
      path: '/send/transactional/batch',
      headers: { 'x-helo-channel-id': v.channel },
      body: { requests: [{ from: { email: `app@${v.domain}` }, to: [{ email: 'ann@example.net' }], subject: 'x', text: 'x' }] },
    },
  ],
  'POST /send/broadcast/message': (v) => [
    {
      method: 'POST',
      path: '/send/broadcast/message',
      headers: { 'x-helo-channel-id': v.channel },
      body: { from: { email: `app@${v.domain}` }, to: [{ email: 'ann@example.net' }], subject: 'x', text: 'x' },
    },
  ],
  'GET /broadcasts': (v) => [{ method: 'GET', path: `/broadcasts?channelId=${v.channel}` }],
  'GET /broadcasts/{id}': (v) => [{ method: 'GET', path: `/broadcasts/${v.broadcast}` }],
  'GET /broadcasts/{id}/failures': (v) => [{ method: 'GET', path: `/broadcasts/${v.broadcast}/failures` }],
  'GET /broadcasts/{id}/suppressions': (v) => [{ method: 'GET', path: `/broadcasts/${v.broadcast}/suppressions` }],
  'POST /broadcasts/{id}/cancel': (v) => [{ method: 'POST', path: `/broadcasts/${v.broadcast}/cancel` }],
  'POST /suppressions': (v) => [{ method: 'POST', path: '/suppressions', body: { channelId: v.channel, mailType: 'transactional', emails: ['new@example.net'] } }],
  'POST /suppressions/remove': (v) => [{ method: 'POST', path: '/suppressions/remove', body: { channelId: v.channel, mailType: 'transactional', emails: [SUPPRESSED] } }],
  'GET /suppressions': (v) => [{ method: 'GET', path: `/suppressions?channelId=${v.channel}&mailType=transactional` }],
  'GET /activity/events': (v) => [
    { method: 'GET', path: `/activity/events?channelId=${v.channel}` },
    { method: 'GET', path: `/activity/events?messageId=${v.message}` },
    { method: 'GET', path: '/activity/events?limit=500', list: true },
  ],
  'GET /activity/messages/{id}': (v) => [{ method: 'GET', path: `/activity/messages/${v.message}` }],
  'POST /activity/messages/{id}/cancel': (v) => [{ method: 'POST', path: `/activity/messages/${v.message}/cancel` }],
  'PATCH /activity/messages/{id}': (v) => [{ method: 'PATCH', path: `/activity/messages/${v.message}`, body: { scheduledAt: new Date(Date.now() + 86_400_000).toISOString() } }],
  'GET /statistics/totals': (v) => [{ method: 'GET', path: `/statistics/totals?channelId=${v.channel}` }],
  'GET /activity/messages': (v) => [
    { method: 'GET', path: `/activity/messages?channelId=${v.channel}` },
    { method: 'GET', path: '/activity/messages?limit=500', list: true },
  ],
  'GET /statistics/daily': (v) => [{ method: 'GET', path: `/statistics/daily?channelId=${v.channel}` }],
  'GET /statistics/hourly': (v) => [{ method: 'GET', path: `/statistics/hourly?channelId=${v.channel}` }],
  'GET /activity/statistics/totals': (v) => [{ method: 'GET', path: `/activity/statistics/totals?channelId=${v.channel}` }],
  'GET /activity/statistics/daily': (v) => [{ method: 'GET', path: `/activity/statistics/daily?channelId=${v.channel}` }],
  'GET /activity/statistics/hourly': (v) => [{ method: 'GET', path: `/activity/statistics/hourly?channelId=${v.channel}` }],
  'POST /webhooks': (v) => [{ method: 'POST', path: '/webhooks', body: { url: HOOK_URL, events: ['complained'], channelId: v.channel } }],
  'GET /webhooks': (v) => [{ method: 'GET', path: `/webhooks?channelIds=${v.channel}&limit=500`, list: true }, { method: 'GET', path: '/webhooks?limit=500', list: true }],
  'GET /webhooks/{id}': (v) => [{ method: 'GET', path: `/webhooks/${v.webhook}` }],
  'PATCH /webhooks/{id}': (v) => [{ method: 'PATCH', path: `/webhooks/${v.webhook}`, body: { enabled: false } }],
  'DELETE /webhooks/{id}': (v) => [{ method: 'DELETE', path: `/webhooks/${v.webhook}` }],
  'POST /webhooks/{id}/regenerate-signing-key': (v) => [{ method: 'POST', path: `/webhooks/${v.webhook}/regenerate-signing-key` }],
  'POST /webhooks/{id}/test': (v) => [{ method: 'POST', path: `/webhooks/${v.webhook}/test` }],
  'POST /inbound/routes': (v) => [{ method: 'POST', path: '/inbound/routes', body: { channelId: v.channel, address: `intruder@${v.domain}`, url: HOOK_URL } }],
  'GET /inbound/routes': (v) => [{ method: 'GET', path: `/inbound/routes?channelIds=${v.channel}&limit=500`, list: true }, { method: 'GET', path: '/inbound/routes?limit=500', list: true }],
  'GET /inbound/routes/{id}': (v) => [{ method: 'GET', path: `/inbound/routes/${v.route}` }],
  'PATCH /inbound/routes/{id}': (v) => [{ method: 'PATCH', path: `/inbound/routes/${v.route}`, body: { url: 'http://127.0.0.1:9/stolen' } }],
  'DELETE /inbound/routes/{id}': (v) => [{ method: 'DELETE', path: `/inbound/routes/${v.route}` }],
  'POST /inbound/routes/{id}/regenerate-signing-key': (v) => [{ method: 'POST', path: `/inbound/routes/${v.route}/regenerate-signing-key` }],
  'POST /templates': (v) => [{ method: 'POST', path: '/templates', body: { name: 'intruder', subject: 's', text: 't', channelIds: [v.channel] } }],
  'GET /templates': (v) => [{ method: 'GET', path: `/templates?channelIds=${v.channel}&limit=500`, list: true }, { method: 'GET', path: '/templates?limit=500', list: true }],
  'GET /templates/{idOrAlias}': (v) => [{ method: 'GET', path: `/templates/${v.template}` }, { method: 'GET', path: `/templates/${v.template}?version=1` }],
  'PATCH /templates/{idOrAlias}': (v) => [{ method: 'PATCH', path: `/templates/${v.template}`, body: { text: 'stolen' } }],
  'DELETE /templates/{idOrAlias}': (v) => [{ method: 'DELETE', path: `/templates/${v.template}` }],
  'GET /templates/{idOrAlias}/versions': (v) => [{ method: 'GET', path: `/templates/${v.template}/versions` }],
  'POST /templates/{idOrAlias}/activate': (v) => [{ method: 'POST', path: `/templates/${v.template}/activate`, body: { version: 1 } }],
  'POST /templates/{idOrAlias}/render': (v) => [{ method: 'POST', path: `/templates/${v.template}/render`, body: { data: {} } }],
  // Renders the content in its body and reads nothing stored: any key gets 200, never A's template.
  'POST /templates/render': () => [{ method: 'POST', path: '/templates/render', body: { subject: 's {{x}}', text: 'draft {{x}}', data: { x: 1 } }, list: true }],
  'GET /inbound/messages': (v) => [
    { method: 'GET', path: `/inbound/messages?channelId=${v.channel}&limit=500`, list: true },
    { method: 'GET', path: `/inbound/messages?routeId=${v.route}&limit=500`, list: true },
    { method: 'GET', path: '/inbound/messages?limit=500', list: true },
  ],
  'GET /inbound/messages/{id}': (v) => [{ method: 'GET', path: `/inbound/messages/${v.inbound}` }],
  'GET /inbound/messages/{id}/raw': (v) => [{ method: 'GET', path: `/inbound/messages/${v.inbound}/raw` }],
  'GET /inbound/messages/{id}/attachments/{index}': (v) => [{ method: 'GET', path: `/inbound/messages/${v.inbound}/attachments/0` }],
  'POST /inbound/messages/{id}/retry': (v) => [{ method: 'POST', path: `/inbound/messages/${v.inbound}/retry` }],
  'GET /inbound/statistics/daily': (v) => [{ method: 'GET', path: `/inbound/statistics/daily?channelId=${v.channel}` }],
  'GET /queue': () => [{ method: 'GET', path: '/queue?limit=500', list: true }],
  'GET /queue/messages': () => [{ method: 'GET', path: '/queue/messages?limit=500', list: true }],
  'POST /queue/messages/{id}/retry': (v) => [{ method: 'POST', path: `/queue/messages/${v.message}/retry` }],
  'DELETE /queue/messages/{id}': (v) => [{ method: 'DELETE', path: `/queue/messages/${v.message}` }],
};

/** Ids and names of A that must never appear in another tenant's 2xx answer. */
function secretsOf(v: Tenant): string[] {
  return [v.accountKeyId, v.channel, v.domainId, v.domain, v.webhook, v.route, v.inbound, v.message, v.broadcast];
}

async function call(key: string, c: Call): Promise<ApiResponse> {
  return t.api(c.method, c.path, { key, body: c.body, headers: c.headers });
}

function leakOf(res: ApiResponse, c: Call, victim: Tenant): string | null {
  const text = JSON.stringify(res.body ?? '');
  if (res.status >= 200 && res.status < 300) {
    if (!c.list) return `${res.status} ${text.slice(0, 200)}`;
    const found = secretsOf(victim).filter((s) => text.includes(s));
    if (found.length > 0) return `${res.status} lists ${found.join(', ')}`;
    return null;
  }
  if (c.list && res.status === 403) return null;
  if (!c.list && res.status !== 403) return `${res.status} instead of 403: ${text.slice(0, 200)}`;
  return null;
}

/** "METHOD /path/{param}" of every route in Fastify's own table (its printRoutes tree). */
function serverRoutes(): string[] {
  const tree: string = (t.daemon.http as unknown as { app: { printRoutes(o: object): string } }).app.printRoutes({ commonPrefix: false });
  const stack: string[] = [];
  const out: string[] = [];
  for (const line of tree.split('\n')) {
    const m = /^(.*?)[├└]── (\S+) \(([^)]+)\)/.exec(line);
    if (!m) continue;
    const depth = m[1].length / 4;
    stack.length = depth;
    stack.push(m[2]);
    const path = stack.join('').replace(/:(\w+)/g, '{$1}');
    for (const method of m[3].split(',').map((x) => x.trim())) if (method !== 'HEAD') out.push(`${method} ${path}`);
  }
  return out;
}

describe('tenant isolation', () => {
  it('works from a complete route list: /openapi.json documents every route the server has', async () => {
    const doc = await t.api('GET', '/openapi.json', { key: null });
    const documented = new Set(Object.entries(doc.body.paths as Record<string, object>).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`)));
    const routes = serverRoutes();
    expect(routes.length).toBeGreaterThan(20);
    // The dashboard's files (GET /dashboard, /dashboard/*) and the root that redirects there are the web app, public, not API operations;
    // a message's HTML and a template's preview for their iframes check the session themselves (dashboard-message-html.test.ts,
    // dashboard-template-html.test.ts: other accounts 403).
    // GET /dashboard/settings holds no account's data (dashboard-settings.test.ts: the same answer for every account), nor does the
    // preview of unsaved template content, which renders its body (dashboard-template-draft-html.test.ts).
    const files = [
      'GET /openapi.json',
      'GET /',
      'GET /dashboard/settings',
      'GET /dashboard',
      'GET /dashboard*',
      'GET /dashboard/messages/{id}/html',
      'GET /dashboard/templates/{idOrAlias}/html',
      'POST /dashboard/templates/preview-html',
    ];
    expect(routes.filter((r) => !documented.has(r) && !files.includes(r))).toEqual([]);
  });

  it('covers every authenticated operation of /openapi.json', () => {
    expect(operations.length).toBeGreaterThan(15);
    expect(operations.filter((op) => !MATRIX[op])).toEqual([]);
  });

  it('lets A\'s own keys read what the matrix aims at (positive control)', async () => {
    for (const [op, build] of Object.entries(MATRIX)) {
      if (!op.startsWith('GET ')) continue;
      for (const c of build(a)) {
        // The account's keys are listed to account-level keys only (a channel key gets 403).
        for (const key of op === 'GET /api-keys' ? [a.accountKey] : [a.accountKey, a.channelKey]) {
          const res = await call(key, c);
          expect(res.status, `${c.method} ${c.path}: ${JSON.stringify(res.body).slice(0, 200)}`).toBe(200);
        }
      }
    }
  });

  it('answers 403, never 2xx, to another account\'s account and channel keys and to a sibling channel\'s key', async () => {
    const attackers = { 'B account key': b.accountKey, 'B channel key': b.channelKey, 'A sibling channel key': sibling.key };
    const leaks: string[] = [];
    for (const op of operations) {
      for (const c of MATRIX[op]?.(a) ?? []) {
        for (const [who, key] of Object.entries(attackers)) {
          const res = await call(key, c);
          const leak = leakOf(res, c, a);
          if (leak) leaks.push(`${who}: ${c.method} ${c.path} -> ${leak}`);
          if (res.status >= 400) expect(res.headers.get('content-type'), `${c.method} ${c.path}`).toMatch(/^application\/problem\+json/);
        }
      }
    }
    expect(leaks).toEqual([]);
  });

  it('answers 403 to a send that names A\'s template from a channel it may send through: B\'s keys on B\'s channel, A\'s sibling channel key', async () => {
    const senders: Array<{ who: string; key: string; headers: Record<string, string>; from: string }> = [
      { who: 'B account key', key: b.accountKey, headers: { 'x-service-channel-id': b.channel }, from: `app@${b.domain}` },
      { who: 'B channel key', key: b.channelKey, headers: {}, from: `app@${b.domain}` },
      // A's template is linked to A's first channel only.
      { who: 'A sibling channel key', key: sibling.key, headers: {}, from: `app@${a.domain}` },
    ];
    const leaks: string[] = [];
    for (const s of senders) {
      for (const template of [{ id: a.template }, { id: a.template, version: 1 }, { id: a.template, version: 2 }]) {
        const one = { from: { email: s.from }, to: [{ email: 'ann@example.net' }], template };
        const calls: Call[] = [
          { method: 'POST', path: '/send/transactional', headers: s.headers, body: one },
          { method: 'POST', path: '/send/broadcast/message', headers: s.headers, body: one },
          { method: 'POST', path: '/send/broadcast', headers: s.headers, body: { from: one.from, template, messages: [{ to: one.to }] } },
        ];
        for (const c of calls) {
          const leak = leakOf(await call(s.key, c), c, a);
          if (leak) leaks.push(`${s.who}: ${c.path} ${JSON.stringify(template)} -> ${leak}`);
        }
        // A batch answers per entry: the entry fails forbidden, nothing is sent.
        const batch = await call(s.key, { method: 'POST', path: '/send/transactional/batch', headers: s.headers, body: { requests: [one] } });
        const entry = batch.body.responses?.[0];
        if (batch.status !== 200 || entry?.errorCode !== 'forbidden') leaks.push(`${s.who}: batch ${JSON.stringify(template)} -> ${batch.status} ${JSON.stringify(batch.body).slice(0, 200)}`);
      }
    }
    expect(leaks).toEqual([]);
  });

  it('left A\'s channel, domain, webhook, inbound route and message, message and suppression as they were', async () => {
    const channel = await t.api('GET', `/channels/${a.channel}`);
    expect(channel.status).toBe(200);
    expect(channel.body.name).not.toBe('stolen');
    const domain = await t.api('GET', `/domains/${a.domainId}`);
    expect(domain.status).toBe(200);
    expect(domain.body.channels.map((c: { id: string }) => c.id)).toEqual([a.channel]);
    const hook = await t.api('GET', `/webhooks/${a.webhook}`);
    expect(hook.status).toBe(200);
    expect(hook.body).toMatchObject({ url: HOOK_URL, enabled: true, channelId: a.channel });
    const tpl = await t.api('GET', `/templates/${a.template}`);
    expect([tpl.status, tpl.body.activeVersion, tpl.body.version.text]).toEqual([200, 1, 'private {{x}}']);
    const route = await t.api('GET', `/inbound/routes/${a.route}`);
    expect([route.status, route.body.url, route.body.channelId]).toEqual([200, HOOK_URL, a.channel]);
    const inbound = await t.api('GET', `/inbound/messages/${a.inbound}`);
    expect([inbound.status, inbound.body.status, inbound.body.attemptCount]).toEqual([200, 'received', 0]);
    expect((await t.api('GET', `/activity/messages/${a.message}`)).status).toBe(200);
    expect((await t.api('GET', '/channels', { key: a.accountKey })).status).toBe(200);
    expect(await t.daemon.store.suppressions.is(a.channel, 'transactional', SUPPRESSED)).toBe(true);
    expect(await t.daemon.store.suppressions.is(a.channel, 'transactional', 'new@example.net')).toBe(false);
    expect((await t.api('GET', `/broadcasts/${a.broadcast}`)).body.status).not.toBe('canceled');
    // Only A's own sends (one message, one broadcast entry) went through A's channel.
    await t.daemon.submission.expander.drain();
    const events = await t.api('GET', `/activity/events?channelId=${a.channel}&eventTypes=accepted`);
    expect(events.body.totalCount).toBe(2);
  });

  it('keeps B\'s resources away from A in the same way', async () => {
    const leaks: string[] = [];
    for (const op of operations) {
      for (const c of MATRIX[op]?.(b) ?? []) {
        if (c.method !== 'GET') continue;
        const res = await call(a.accountKey, c);
        const leak = leakOf(res, c, b);
        if (leak) leaks.push(`${c.method} ${c.path} -> ${leak}`);
      }
    }
    expect(leaks).toEqual([]);
  });
});
