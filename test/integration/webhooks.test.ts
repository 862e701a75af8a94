import { createHmac, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_TYPES, type EventRecord, type EventType } from '../../src/domain/types.js';
import { seedEvents } from '../support/engine-fixtures.js';
import { channelKey, newAccount, newChannel } from '../support/domains.js';
import { startDaemon, type ApiResponse, type TestDaemon } from '../support/daemon.js';
import { startDnsServer, type TestDns } from '../support/dns-server.js';
import { setupSender } from '../support/sending.js';
import { waitFor } from '../support/wait.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let t: TestDaemon;
let rx: WebhookReceiver;

beforeAll(async () => {
  rx = await startWebhookReceiver();
  t = await startDaemon({
    'webhooks.allowHttp': true,
    'webhooks.allowPrivate': true,
    'webhooks.retryBaseMs': 100,
    'webhooks.maxAgeMs': 3000,
    'webhooks.timeoutMs': 2000,
    'shutdown.graceMs': 200,
  });
});

afterAll(async () => {
  await t?.stop();
  await rx?.close();
});

let paths = 0;
/** A fresh receiver path per webhook, so tests never see each other's requests. */
function nextPath(): string {
  return `/hook-${++paths}`;
}

async function createHook(body: Record<string, unknown>, key?: string): Promise<any> {
  const res = await t.api('POST', '/webhooks', { key, body: { events: [...EVENT_TYPES], ...body } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

/**
 * Appends an event through the engine's real writer, as the sending, delivery and tracking parts
 * do (the port has no append verb: an event is written by the verb whose change it records).
 */
async function appendEvent(
  d: TestDaemon,
  e: { accountId?: string; channelId: string; messageId?: string; eventType: EventType; details?: Record<string, unknown>; recipients?: string[] },
): Promise<EventRecord> {
  const [stored] = await seedEvents(d.daemon.store, [
    {
      accountId: e.accountId ?? d.accountId,
      channelId: e.channelId,
      messageId: e.messageId ?? randomUUID(),
      mailType: 'transactional',
      mailSource: 'api',
      eventType: e.eventType,
      timestamp: new Date().toISOString(),
      subject: 'Your order',
      recipients: e.recipients ?? ['ann@example.net'],
      tags: ['receipt'],
      metadata: { order: '42' },
      details: e.details ?? {},
    },
  ]);
  return stored;
}

/** The receiver's own check, written from docs/api.md's description with node:crypto only. */
function verify(signingKey: string, header: string, body: string): boolean {
  const fields = Object.fromEntries(header.split(',').map((kv) => kv.split('=') as [string, string]));
  const expected = createHmac('sha256', signingKey).update(`${fields.t}.${body}`).digest('hex');
  return fields.v1 === expected && Math.abs(Date.now() / 1000 - Number(fields.t)) < 300;
}

function fieldCodes(res: ApiResponse, pointer: string): string[] {
  expect(res.status, JSON.stringify(res.body)).toBe(422);
  expect(res.body.code).toBe('validation_failed');
  return (res.body.errors[pointer] ?? []).map((e: { code: string }) => e.code);
}

describe('webhook CRUD', () => {
  it('creates a webhook and answers every field of the SDKs, payloadSigningKey included, in create, retrieve and list', async () => {
    const channelId = await newChannel(t);
    const url = rx.url(nextPath());
    const created = await createHook({ url, events: ['delivered', 'bounced'], channelId, additionalHeaders: [{ name: 'X-Api-Token', value: 'abc 123' }] });
    expect(created).toEqual({
      id: expect.stringMatching(UUID),
      channelId,
      url,
      payloadSigningKey: expect.stringMatching(/^whsec_[A-Za-z0-9_-]{43}$/),
      enabled: true,
      additionalHeaders: [{ name: 'X-Api-Token', value: 'abc 123' }],
      events: ['delivered', 'bounced'],
      lastResponse: null,
      lastDelivery: null,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
      deliveryStats: { succeeded: 0, failedAttempts: 0, failed: 0, consecutiveFailures: 0, pending: 0 },
    });
    expect(created).not.toHaveProperty('signingKey');
    const got = await t.api('GET', `/webhooks/${created.id}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(created);
    const list = await t.api('GET', '/webhooks?limit=500');
    expect(list.body.results.find((w: any) => w.id === created.id)).toEqual(created);
  });

  it('shows additionalHeaders values only to account-level keys, masked for channel keys', async () => {
    const channelId = await newChannel(t);
    const created = await createHook({ url: rx.url(nextPath()), channelId, additionalHeaders: [{ name: 'Authorization', value: 'Bearer s3cret-token' }] });
    const key = await channelKey(t, t.accountId, channelId);
    const got = await t.api('GET', `/webhooks/${created.id}`, { key });
    expect(got.status).toBe(200);
    expect(got.body.additionalHeaders).toEqual([{ name: 'Authorization', value: '********' }]);
    const list = await t.api('GET', '/webhooks?limit=500', { key });
    expect(JSON.stringify(list.body)).not.toContain('s3cret-token');
    expect((await t.api('GET', `/webhooks/${created.id}`)).body.additionalHeaders).toEqual([{ name: 'Authorization', value: 'Bearer s3cret-token' }]);
  });

  it('lists with limit and offset and a total count', async () => {
    const { key } = await newAccount(t);
    for (let i = 0; i < 3; i++) await createHook({ url: rx.url(`/list-${i}`) }, key);
    const page = await t.api('GET', '/webhooks?limit=2&offset=1', { key });
    expect(page.body.totalCount).toBe(3);
    expect(page.body.results.map((w: any) => w.url)).toEqual([rx.url('/list-1'), rx.url('/list-2')]);
  });

  it('requires url and events and refuses unknown event types', async () => {
    const res = await t.api('POST', '/webhooks', { body: {} });
    expect(fieldCodes(res, '/url')).toEqual(['required']);
    expect(fieldCodes(res, '/events')).toEqual(['required']);
    expect(fieldCodes(await t.api('POST', '/webhooks', { body: { url: rx.url('/x'), events: ['sent'] } }), '/events/0')).toEqual(['invalid_value']);
    expect(fieldCodes(await t.api('POST', '/webhooks', { body: { url: rx.url('/x'), events: [] } }), '/events')).toEqual(['min_items']);
  });

  it('refuses header names that are not tokens, values with CR/LF, and headers postrider sets', async () => {
    const url = rx.url('/x');
    const bad = async (h: { name: string; value: string }) => t.api('POST', '/webhooks', { body: { url, events: ['delivered'], additionalHeaders: [h] } });
    expect(fieldCodes(await bad({ name: 'X Bad', value: 'v' }), '/additionalHeaders/0/name')).toEqual(['invalid_format']);
    expect(fieldCodes(await bad({ name: 'X-Colon:', value: 'v' }), '/additionalHeaders/0/name')).toEqual(['invalid_format']);
    expect(fieldCodes(await bad({ name: 'X-Ok', value: 'a\r\nInjected: yes' }), '/additionalHeaders/0/value')).toEqual(['invalid_format']);
    expect(fieldCodes(await bad({ name: 'X-Ok', value: 'a\nb' }), '/additionalHeaders/0/value')).toEqual(['invalid_format']);
    // Node cannot send a header character beyond U+00FF: such a webhook could never deliver.
    expect(fieldCodes(await bad({ name: 'X-Ok', value: 'token ✓' }), '/additionalHeaders/0/value')).toEqual(['invalid_format']);
    expect(fieldCodes(await bad({ name: 'X-Service-Webhook-Signature', value: 'forged' }), '/additionalHeaders/0/name')).toEqual(['reserved_header']);
    expect(fieldCodes(await bad({ name: 'Content-Length', value: '1' }), '/additionalHeaders/0/name')).toEqual(['reserved_header']);
  });

  it('updates fields with PATCH and removes the webhook with DELETE', async () => {
    const hook = await createHook({ url: rx.url(nextPath()), events: ['opened'] });
    const patched = await t.api('PATCH', `/webhooks/${hook.id}`, { body: { events: ['clicked', 'opened'], enabled: false } });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ events: ['clicked', 'opened'], enabled: false, url: hook.url });
    expect((await t.api('DELETE', `/webhooks/${hook.id}`)).status).toBe(204);
    const gone = await t.api('GET', `/webhooks/${hook.id}`);
    expect(gone.status).toBe(404);
    expect(gone.body.code).toBe('not_found');
  });

  it('removes the webhooks of a channel when the channel is deleted', async () => {
    const channelId = await newChannel(t);
    const hook = await createHook({ url: rx.url(nextPath()), channelId });
    expect((await t.api('DELETE', `/channels/${channelId}`)).status).toBe(204);
    expect((await t.api('GET', `/webhooks/${hook.id}`)).status).toBe(404);
  });
});

describe('webhook tenant isolation', () => {
  it("answers 403 for another account's webhook and 404 for an unknown one", async () => {
    const other = await newAccount(t);
    const theirs = await createHook({ url: rx.url('/theirs') }, other.key);
    for (const [method, path] of [['GET', ''], ['PATCH', ''], ['DELETE', ''], ['POST', '/regenerate-signing-key']] as const) {
      const res = await t.api(method, `/webhooks/${theirs.id}${path}`, method === 'PATCH' ? { body: { enabled: false } } : {});
      expect(res.status, `${method} ${path}`).toBe(403);
    }
    expect((await t.api('GET', '/webhooks?limit=500')).body.results.some((w: any) => w.id === theirs.id)).toBe(false);
    const unknown = await t.api('GET', `/webhooks/${randomUUID()}`);
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('not_found');
    expect((await t.api('GET', '/webhooks/not-a-uuid')).status).toBe(422);
  });

  it("refuses a channelId of another account (403) and an unknown one (404 channel_not_found)", async () => {
    const other = await newAccount(t);
    const theirChannel = await newChannel(t, other.key);
    const res = await t.api('POST', '/webhooks', { body: { url: rx.url('/x'), events: ['delivered'], channelId: theirChannel } });
    expect(res.status).toBe(403);
    const unknown = await t.api('POST', '/webhooks', { body: { url: rx.url('/x'), events: ['delivered'], channelId: randomUUID() } });
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('channel_not_found');
    const mine = await createHook({ url: rx.url('/x') });
    expect((await t.api('PATCH', `/webhooks/${mine.id}`, { body: { channelId: theirChannel } })).status).toBe(403);
  });

  it("lets a channel key read only its channel's webhooks and change none", async () => {
    const acct = await newAccount(t);
    const mineChannel = await newChannel(t, acct.key);
    const otherChannel = await newChannel(t, acct.key);
    const mine = await createHook({ url: rx.url('/c1'), channelId: mineChannel }, acct.key);
    const sibling = await createHook({ url: rx.url('/c2'), channelId: otherChannel }, acct.key);
    const accountWide = await createHook({ url: rx.url('/c3') }, acct.key);
    const ck = await channelKey(t, acct.accountId, mineChannel);
    const list = await t.api('GET', '/webhooks', { key: ck });
    expect(list.body.results.map((w: any) => w.id)).toEqual([mine.id]);
    expect(list.body.totalCount).toBe(1);
    expect((await t.api('GET', `/webhooks/${mine.id}`, { key: ck })).status).toBe(200);
    expect((await t.api('GET', `/webhooks/${sibling.id}`, { key: ck })).status).toBe(403);
    expect((await t.api('GET', `/webhooks/${accountWide.id}`, { key: ck })).status).toBe(403);
    expect((await t.api('POST', '/webhooks', { key: ck, body: { url: rx.url('/c4'), events: ['delivered'] } })).status).toBe(403);
    expect((await t.api('PATCH', `/webhooks/${mine.id}`, { key: ck, body: { enabled: false } })).status).toBe(403);
    expect((await t.api('POST', `/webhooks/${mine.id}/regenerate-signing-key`, { key: ck })).status).toBe(403);
    expect((await t.api('DELETE', `/webhooks/${mine.id}`, { key: ck })).status).toBe(403);
  });

  it("never sends one account's events to another account's webhook", async () => {
    const other = await newAccount(t);
    const path = nextPath();
    await createHook({ url: rx.url(path) }, other.key);
    const channelId = await newChannel(t);
    const ownPath = nextPath();
    await createHook({ url: rx.url(ownPath), channelId });
    const messageId = randomUUID();
    await appendEvent(t, { channelId, messageId, eventType: 'delivered' });
    await waitFor(() => rx.at(ownPath).length === 1, { what: 'own delivery' });
    // Sentinel: a later event of the same message in the other account. Entries of one
    // (webhook, message) pair go out in event order, so had the first event leaked into the
    // other account's outbox, it would reach `path` before this one.
    const otherChannel = await newChannel(t, other.key);
    await appendEvent(t, { accountId: other.accountId, channelId: otherChannel, messageId, eventType: 'opened' });
    await waitFor(() => rx.at(path).some((r) => r.json.channelId === otherChannel), { what: "the other account's own event" });
    expect(rx.at(path).filter((r) => r.json.channelId !== otherChannel)).toEqual([]);
  });
});

describe('webhook delivery', () => {
  it('POSTs the event as JSON with a signature that verifies with the signing key', async () => {
    const channelId = await newChannel(t);
    const path = nextPath();
    const hook = await createHook({ url: rx.url(path), channelId, additionalHeaders: [{ name: 'Authorization', value: 'Basic dTpw' }] });
    const event = await appendEvent(t, { channelId, eventType: 'delivered', details: { smtpCode: 250 } });
    const [req] = await waitFor(() => (rx.at(path).length === 1 ? rx.at(path) : undefined), { what: 'delivery' });
    expect(req.method).toBe('POST');
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.headers.authorization).toBe('Basic dTpw');
    expect(req.headers['x-service-webhook-id']).toMatch(UUID);
    expect(req.headers['x-service-webhook-signature']).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(verify(hook.payloadSigningKey, String(req.headers['x-service-webhook-signature']), req.body)).toBe(true);
    expect(verify(hook.payloadSigningKey, String(req.headers['x-service-webhook-signature']), req.body.replace('250', '251'))).toBe(false);
    expect(req.json).toEqual({
      channelId,
      eventType: 'delivered',
      mailType: 'transactional',
      messageId: event.messageId,
      recipient: 'ann@example.net',
      subject: 'Your order',
      tags: ['receipt'],
      metadata: { order: '42' },
      timestamp: event.timestamp,
      details: { smtpCode: 250 },
    });
    await waitFor(async () => (await t.api('GET', `/webhooks/${hook.id}`)).body.deliveryStats.succeeded === 1, { what: 'status', timeout: 5000 });
    const read = await t.api('GET', `/webhooks/${hook.id}`);
    expect(read.body.lastResponse).toEqual({ statusCode: 200, error: null, at: expect.any(String) });
    expect(read.body.deliveryStats).toMatchObject({ succeeded: 1, failedAttempts: 0, pending: 0 });
  });

  it('sends accepted and processed once with every recipient, and other types once per recipient with recipient, all with details', async () => {
    const channelId = await newChannel(t);
    const path = nextPath();
    await createHook({ url: rx.url(path), channelId });
    const messageId = randomUUID();
    const recipients = ['ann@example.net', 'bob@example.org'];
    for (const eventType of ['accepted', 'processed', 'delivered', 'bounced'] as const) {
      await appendEvent(t, { channelId, messageId, eventType, recipients, details: eventType === 'bounced' ? { smtpCode: 550 } : {} });
    }
    await waitFor(() => rx.at(path).length === 6, { what: 'six payloads' });
    const bodies = rx.at(path).map((r) => r.json);
    expect(bodies.map((b) => [b.eventType, b.recipients ?? b.recipient])).toEqual([
      ['accepted', recipients],
      ['processed', recipients],
      ['delivered', 'ann@example.net'],
      ['delivered', 'bob@example.org'],
      ['bounced', 'ann@example.net'],
      ['bounced', 'bob@example.org'],
    ]);
    for (const b of bodies.slice(0, 2)) {
      expect(Object.keys(b).sort()).toEqual(['channelId', 'details', 'eventType', 'mailType', 'messageId', 'metadata', 'recipients', 'subject', 'tags', 'timestamp']);
    }
    for (const b of bodies.slice(2)) {
      expect(Object.keys(b).sort()).toEqual(['channelId', 'details', 'eventType', 'mailType', 'messageId', 'metadata', 'recipient', 'subject', 'tags', 'timestamp']);
    }
    expect(bodies[4].details).toEqual({ smtpCode: 550 });
    expect(new Set(rx.at(path).map((r) => r.headers['x-service-webhook-id'])).size).toBe(6);
  });

  it('signs with the new key after regenerate-signing-key', async () => {
    const channelId = await newChannel(t);
    const path = nextPath();
    const hook = await createHook({ url: rx.url(path), channelId });
    const regen = await t.api('POST', `/webhooks/${hook.id}/regenerate-signing-key`);
    expect(regen.status).toBe(200);
    expect(regen.body.payloadSigningKey).toMatch(/^whsec_/);
    expect(regen.body.payloadSigningKey).not.toBe(hook.payloadSigningKey);
    await appendEvent(t, { channelId, eventType: 'opened' });
    const [req] = await waitFor(() => (rx.at(path).length === 1 ? rx.at(path) : undefined), { what: 'delivery' });
    const header = String(req.headers['x-service-webhook-signature']);
    expect(verify(regen.body.payloadSigningKey, header, req.body)).toBe(true);
    expect(verify(hook.payloadSigningKey, header, req.body)).toBe(false);
  });

  it('delivers every event type of the spec, in order per message', async () => {
    const channelId = await newChannel(t);
    const path = nextPath();
    await createHook({ url: rx.url(path), channelId });
    const messageId = randomUUID();
    for (const eventType of EVENT_TYPES) await appendEvent(t, { channelId, messageId, eventType });
    await waitFor(() => rx.at(path).length === EVENT_TYPES.length, { what: 'all event types' });
    expect(rx.at(path).map((r) => r.json.eventType)).toEqual([...EVENT_TYPES]);
  });

  it('sends only the chosen event types of the chosen channel', async () => {
    const channelA = await newChannel(t);
    const channelB = await newChannel(t);
    const path = nextPath();
    await createHook({ url: rx.url(path), channelId: channelA, events: ['bounced', 'complained'] });
    // One message for all three: entries of one (webhook, message) pair go out in event order,
    // so the wanted last event is the sentinel after which an unwanted one would have arrived.
    const messageId = randomUUID();
    await appendEvent(t, { channelId: channelA, messageId, eventType: 'delivered' });
    await appendEvent(t, { channelId: channelB, messageId, eventType: 'bounced' });
    await appendEvent(t, { channelId: channelA, messageId, eventType: 'complained' });
    await waitFor(() => rx.at(path).some((r) => r.json.eventType === 'complained'), { what: 'the complaint' });
    expect(rx.at(path).map((r) => [r.json.channelId, r.json.eventType])).toEqual([[channelA, 'complained']]);
  });

  it('reaches the endpoint for a real sandbox send (accepted, processed, delivered)', async () => {
    const sender = await setupSender(t, undefined as unknown as TestDns, { deliveryType: 'sandbox', verify: false });
    const path = nextPath();
    await createHook({ url: rx.url(path), channelId: sender.channelId });
    const send = await t.api('POST', '/send/transactional', {
      headers: { 'x-service-channel-id': sender.channelId },
      body: { from: { email: `shop@${sender.domain}` }, to: [{ email: 'ann@example.net' }], subject: 'Hello', text: 'Hi' },
    });
    expect(send.status, JSON.stringify(send.body)).toBe(200);
    await waitFor(() => rx.at(path).length === 3, { what: 'three events' });
    expect(rx.at(path).map((r) => r.json.eventType)).toEqual(['accepted', 'processed', 'delivered']);
    expect(rx.at(path).every((r) => r.json.messageId === send.body.messageId)).toBe(true);
  });

  it('tells the receiver when a scheduled send will go: the accepted payload carries details.scheduledAt', async () => {
    const sender = await setupSender(t, undefined as unknown as TestDns, { deliveryType: 'sandbox', verify: false });
    const path = nextPath();
    await createHook({ url: rx.url(path), channelId: sender.channelId, events: ['accepted', 'processed'] });
    const at = new Date(Date.now() + 3_600_000);
    const send = await t.api('POST', '/send/transactional', {
      headers: { 'x-service-channel-id': sender.channelId },
      body: { from: { email: `shop@${sender.domain}` }, to: [{ email: 'ann@example.net' }], subject: 'Later', text: 'Hi', scheduledAt: at.toISOString() },
    });
    expect(send.status, JSON.stringify(send.body)).toBe(200);
    await waitFor(() => rx.at(path).length === 2, { what: 'accepted and processed' });
    const [accepted, processed] = rx.at(path).map((r) => r.json);
    expect(accepted).toMatchObject({ eventType: 'accepted', messageId: send.body.messageId, details: { scheduledAt: at.toISOString() } });
    expect(processed).toMatchObject({ eventType: 'processed', details: expect.any(Object) });
  });

  it('retries after 500s with growing delays, then succeeds, keeping later events of the message waiting', async () => {
    const channelId = await newChannel(t);
    const path = nextPath();
    rx.on(path, (r, i) => (r.json.eventType === 'accepted' && i < 2 ? { status: 500, body: 'database down' } : { status: 200 }));
    const hook = await createHook({ url: rx.url(path), channelId });
    const messageId = randomUUID();
    await appendEvent(t, { channelId, messageId, eventType: 'accepted' });
    await appendEvent(t, { channelId, messageId, eventType: 'processed' });
    await waitFor(() => rx.at(path).length === 4, { what: 'retries and the second event' });
    const got = rx.at(path);
    expect(got.map((r) => r.json.eventType)).toEqual(['accepted', 'accepted', 'accepted', 'processed']);
    expect(got.map((r) => r.headers['x-service-webhook-attempt'])).toEqual(['1', '2', '3', '1']);
    expect(new Set(got.slice(0, 3).map((r) => r.headers['x-service-webhook-id'])).size).toBe(1);
    // Backoff from the 100 ms base: about 100 ms, then about 200 ms.
    expect(got[1].atMs - got[0].atMs).toBeGreaterThanOrEqual(90);
    expect(got[2].atMs - got[1].atMs).toBeGreaterThanOrEqual(190);
    await waitFor(async () => (await t.api('GET', `/webhooks/${hook.id}`)).body.deliveryStats.succeeded === 2, { what: 'status', timeout: 5000 });
    const read = (await t.api('GET', `/webhooks/${hook.id}`)).body;
    expect(read.deliveryStats).toEqual({ succeeded: 2, failedAttempts: 2, failed: 0, consecutiveFailures: 0, pending: 0 });
    expect(read.lastResponse.statusCode).toBe(200);
  });

  it('gives an event up after webhooks.maxAgeMs and counts it as failed, keeping the response', async () => {
    const channelId = await newChannel(t);
    const path = nextPath();
    rx.on(path, (r) => (r.json.eventType === 'bounced' ? { status: 503, body: 'x'.repeat(100_000) } : { status: 200 }));
    const hook = await createHook({ url: rx.url(path), channelId });
    const messageId = randomUUID();
    await appendEvent(t, { channelId, messageId, eventType: 'bounced' });
    await waitFor(async () => (await t.api('GET', `/webhooks/${hook.id}`)).body.deliveryStats.failed === 1, { what: 'give-up' });
    const read = (await t.api('GET', `/webhooks/${hook.id}`)).body;
    expect(read.deliveryStats.pending).toBe(0);
    expect(read.deliveryStats.failedAttempts).toBeGreaterThanOrEqual(3);
    expect(read.lastResponse.statusCode).toBe(503);
    expect(read.lastResponse.error.length).toBeLessThan(400);
    expect(read.lastResponse.error).toMatch(/^HTTP 503: x+/);
    const attempts = rx.at(path).length;
    // Sentinel: the message's next event goes out only once the given-up one has left the
    // outbox, so a further attempt at the bounce would arrive before it.
    await appendEvent(t, { channelId, messageId, eventType: 'delivered' });
    await waitFor(() => rx.at(path).some((r) => r.json.eventType === 'delivered'), { what: "the message's next event" });
    expect(rx.at(path).filter((r) => r.json.eventType === 'bounced').length).toBe(attempts);
  });

  it('counts a timeout as a failed attempt and retries', async () => {
    const channelId = await newChannel(t);
    const path = nextPath();
    rx.on(path, (_r, i) => (i === 0 ? 'hang' : { status: 204 }));
    const hook = await createHook({ url: rx.url(path), channelId });
    await appendEvent(t, { channelId, eventType: 'clicked' });
    await waitFor(() => rx.at(path).length === 2, { what: 'retry after timeout' });
    await waitFor(async () => (await t.api('GET', `/webhooks/${hook.id}`)).body.deliveryStats.succeeded === 1, { what: 'status', timeout: 5000 });
    expect((await t.api('GET', `/webhooks/${hook.id}`)).body.deliveryStats.failedAttempts).toBe(1);
  });

  it('stops sending to a disabled webhook and drops what was waiting for it', async () => {
    const channelId = await newChannel(t);
    const path = nextPath();
    const sentinel = nextPath();
    rx.on(path, (r) => (r.json.eventType === 'delivered' ? { status: 200 } : { status: 500 }));
    const hook = await createHook({ url: rx.url(path), channelId });
    await createHook({ url: rx.url(sentinel), channelId });
    const opened = randomUUID();
    const clicked = randomUUID();
    await appendEvent(t, { channelId, messageId: opened, eventType: 'opened' });
    await waitFor(() => rx.at(path).length >= 1, { what: 'first attempt' });
    const off = await t.api('PATCH', `/webhooks/${hook.id}`, { body: { enabled: false } });
    expect(off.body.enabled).toBe(false);
    expect(off.body.deliveryStats.pending).toBe(0);
    const before = rx.at(path).length;
    await appendEvent(t, { channelId, messageId: clicked, eventType: 'clicked' });
    await waitFor(() => rx.at(sentinel).length === 2, { what: 'sentinel' });
    // Sentinels through the webhook itself: enabled again, it gets a later event of each
    // message. Entries of one (webhook, message) pair go out in event order, so a retry of the
    // dropped 'opened' or a send of 'clicked' would arrive before these.
    expect((await t.api('PATCH', `/webhooks/${hook.id}`, { body: { enabled: true } })).body.enabled).toBe(true);
    await appendEvent(t, { channelId, messageId: opened, eventType: 'delivered' });
    await appendEvent(t, { channelId, messageId: clicked, eventType: 'delivered' });
    await waitFor(() => rx.at(path).filter((r) => r.json.eventType === 'delivered').length === 2, { what: 'the later events after enabling again' });
    expect(rx.at(path).filter((r) => r.json.eventType !== 'delivered').length).toBe(before);
  });

  it('sends to a webhook created after events of an account that had none, and stops after its deletion', async () => {
    // The events of an account without webhooks skip the webhook lookup (webhook-outbox.ts):
    // creating the first webhook must end that at once, for events of the same account.
    const acct = await newAccount(t);
    const channelId = await newChannel(t, acct.key);
    await appendEvent(t, { accountId: acct.accountId, channelId, eventType: 'delivered' });
    await appendEvent(t, { accountId: acct.accountId, channelId, eventType: 'opened' });
    const path = nextPath();
    const sentinel = nextPath();
    const hook = await createHook({ url: rx.url(path) }, acct.key);
    const first = await appendEvent(t, { accountId: acct.accountId, channelId, eventType: 'clicked' });
    await waitFor(() => rx.at(path).length === 1, { what: 'the event after the first webhook' });
    expect(rx.at(path)[0].json.messageId).toBe(first.messageId);
    expect((await t.api('DELETE', `/webhooks/${hook.id}`, { key: acct.key })).status).toBe(204);
    await createHook({ url: rx.url(sentinel) }, acct.key);
    const later = await appendEvent(t, { accountId: acct.accountId, channelId, eventType: 'clicked' });
    await waitFor(() => rx.at(sentinel).some((r) => r.json.messageId === later.messageId), { what: 'sentinel' });
    expect(rx.at(path).length).toBe(1);
  });

  it('sends what was in flight again after a restart, with the same webhook id', async () => {
    const channelId = await newChannel(t);
    const path = nextPath();
    let hang = true;
    rx.on(path, () => (hang ? 'hang' : { status: 200 }));
    const hook = await createHook({ url: rx.url(path), channelId });
    await appendEvent(t, { channelId, eventType: 'delivered' });
    await waitFor(() => rx.at(path).length === 1, { what: 'first attempt' });
    await t.restart();
    hang = false;
    await waitFor(() => rx.at(path).length === 2, { what: 'attempt after restart' });
    const [first, second] = rx.at(path);
    expect(second.headers['x-service-webhook-id']).toBe(first.headers['x-service-webhook-id']);
    await waitFor(async () => (await t.api('GET', `/webhooks/${hook.id}`)).body.deliveryStats.succeeded === 1, { what: 'status', timeout: 5000 });
    // And the restarted daemon's dispatcher picks up new events too.
    await appendEvent(t, { channelId, eventType: 'opened' });
    await waitFor(() => rx.at(path).length === 3, { what: 'new event after restart' });
  });
});

describe('webhook target policy (defaults: https only, no private addresses)', () => {
  let strict: TestDaemon;
  let dns: TestDns;

  beforeAll(async () => {
    dns = await startDnsServer();
    strict = await startDaemon({ 'dns.servers': [dns.address], 'webhooks.retryBaseMs': 100 });
  });

  afterAll(async () => {
    await strict?.stop();
    await dns?.close();
  });

  async function createOn(url: string): Promise<ApiResponse> {
    return strict.api('POST', '/webhooks', { body: { url, events: ['delivered'] } });
  }

  it('refuses http URLs unless webhooks.allowHttp is set', async () => {
    expect(fieldCodes(await createOn('http://hooks.example.com/x'), '/url')).toEqual(['insecure_url']);
    expect(fieldCodes(await createOn('ftp://hooks.example.com/x'), '/url')).toEqual(['invalid_format']);
    expect(fieldCodes(await createOn('not a url'), '/url')).toEqual(['invalid_format']);
    expect(fieldCodes(await createOn('https://user:pw@hooks.example.com/x'), '/url')).toEqual(['invalid_format']);
  });

  it('refuses loopback, private, link-local, metadata and translated addresses, literal or resolved', async () => {
    dns.set('internal.hooks.test', 'A', ['10.1.2.3']);
    for (const url of [
      'https://127.0.0.1/x',
      'https://127.1.2.3:8443/x',
      'https://[::1]/x',
      'https://[::ffff:127.0.0.1]/x',
      'https://10.0.0.5/x',
      'https://192.168.1.1/x',
      'https://169.254.169.254/latest/meta-data',
      'https://0.0.0.0/x',
      'https://localhost/x',
      'https://api.localhost/x',
      'https://localhost./x',
      'https://api.localhost./x',
      'https://internal.hooks.test/x',
      // IPv6 forms that lead to IPv4 or local networks (IANA special-purpose registries).
      'https://[::7f00:1]/x',
      'https://[64:ff9b::a9fe:a9fe]/latest/meta-data',
      'https://[64:ff9b:1::a00:1]/x',
      'https://[2002:7f00:1::1]/x',
      'https://[fec0::1]/x',
      'https://[2001::1]/x',
      'https://[2001:db8::1]/x',
    ]) {
      expect(fieldCodes(await createOn(url), '/url'), url).toEqual(['forbidden_address']);
    }
    expect(fieldCodes(await createOn('https://nowhere.hooks.test/x'), '/url')).toEqual(['unresolvable_host']);
  });

  it('checks the address again at delivery time, after DNS resolution (DNS rebinding)', async () => {
    dns.set('rebind.hooks.test', 'A', ['8.8.8.8'], 0);
    const channelId = await newChannel(strict);
    const path = nextPath();
    const res = await strict.api('POST', '/webhooks', { body: { url: `https://rebind.hooks.test:${rx.port}${path}`, events: ['delivered'], channelId } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    dns.set('rebind.hooks.test', 'A', ['127.0.0.1'], 0);
    strict.daemon.deliveryDns.clearCache();
    await appendEvent(strict, { channelId, eventType: 'delivered' });
    await waitFor(async () => (await strict.api('GET', `/webhooks/${res.body.id}`)).body.lastResponse, { what: 'an attempt' });
    const read = (await strict.api('GET', `/webhooks/${res.body.id}`)).body;
    expect(read.lastResponse).toMatchObject({ statusCode: null, error: expect.stringMatching(/127\.0\.0\.1.*not allowed/) });
    expect(read.deliveryStats.failedAttempts).toBeGreaterThanOrEqual(1);
    expect(rx.at(path)).toEqual([]);
  });

  it('limits webhooks per account', async () => {
    const { key } = await newAccount(strict);
    dns.set('ok.hooks.test', 'A', ['8.8.8.8']);
    const max = strict.config.webhooks.maxPerAccount;
    for (let i = 0; i < max; i++) {
      const r = await strict.api('POST', '/webhooks', { key, body: { url: `https://ok.hooks.test/${i}`, events: ['delivered'], enabled: false } });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
    }
    const over = await strict.api('POST', '/webhooks', { key, body: { url: 'https://ok.hooks.test/over', events: ['delivered'] } });
    expect(over.status).toBe(403);
    expect(over.body.code).toBe('resource_limit_exceeded');
  });
});
