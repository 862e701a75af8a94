/**
 * POST /webhooks/{id}/test (a test event sent now, signed like a delivery, its outcome in the
 * answer) and the webhook answer's lastDelivery, against a real daemon and a real receiver.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_TYPES } from '../../src/domain/types.js';
import { verifySignature } from '../../src/webhooks/signature.js';
import { channelKey, newAccount, newChannel } from '../support/domains.js';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import { seedEvents } from '../support/engine-fixtures.js';
import { waitFor } from '../support/wait.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

let t: TestDaemon;
let rx: WebhookReceiver;
let paths = 0;

beforeAll(async () => {
  rx = await startWebhookReceiver();
  t = await startDaemon({ 'webhooks.allowHttp': true, 'webhooks.allowPrivate': true, 'webhooks.timeoutMs': 2000 });
});

afterAll(async () => {
  await t?.stop();
  await rx?.close();
});

async function createHook(body: Record<string, unknown>, key?: string): Promise<any> {
  const res = await t.api('POST', '/webhooks', { key, body: { url: rx.url(`/test-${++paths}`), events: ['delivered', 'bounced'], ...body } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

const test = (id: string, o: { body?: unknown; key?: string } = {}) => t.api('POST', `/webhooks/${id}/test`, o);

describe('POST /webhooks/{id}/test', () => {
  it('sends the first event type of the webhook with test data, signed, and answers what the endpoint said', async () => {
    const channelId = await newChannel(t);
    const hook = await createHook({ channelId, additionalHeaders: [{ name: 'X-Api-Token', value: 'secret' }] });
    const res = await test(hook.id);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({ eventType: 'delivered', deliveryId: expect.any(String), statusCode: 200, error: null, ms: expect.any(Number) });
    const [got] = rx.at(new URL(hook.url).pathname);
    expect(got.headers['x-service-webhook-test']).toBe('true');
    expect(got.headers['x-service-webhook-id']).toBe(res.body.deliveryId);
    expect(got.headers['x-service-webhook-attempt']).toBe('1');
    expect(got.headers['x-api-token']).toBe('secret');
    expect(verifySignature({ key: hook.payloadSigningKey, body: got.body, header: String(got.headers['x-service-webhook-signature']), nowSeconds: Date.now() / 1000 })).toBe(true);
    expect(got.json).toEqual({
      channelId,
      eventType: 'delivered',
      mailType: 'transactional',
      messageId: expect.any(String),
      subject: 'postrider test event',
      tags: ['test'],
      metadata: {},
      timestamp: expect.any(String),
      recipient: 'recipient@example.com',
      details: expect.objectContaining({ smtpCode: 250 }),
      test: true,
    });
    // Nothing is recorded: the status counts real deliveries only.
    const read = await t.api('GET', `/webhooks/${hook.id}`);
    expect(read.body).toMatchObject({ lastResponse: null, lastDelivery: null, deliveryStats: { succeeded: 0, failedAttempts: 0, pending: 0 } });
  });

  it('sends the event type asked for, as that type is sent (accepted names all recipients)', async () => {
    const hook = await createHook({ events: [...EVENT_TYPES] });
    const res = await test(hook.id, { body: { eventType: 'accepted' } });
    expect(res.body.eventType).toBe('accepted');
    const [got] = rx.at(new URL(hook.url).pathname);
    expect(got.json).toMatchObject({ eventType: 'accepted', recipients: ['recipient@example.com'], channelId: '00000000-0000-0000-0000-000000000000', test: true });
    expect(got.json).not.toHaveProperty('recipient');
  });

  it('answers 200 with the failure when the endpoint fails or cannot be reached', async () => {
    const hook = await createHook({});
    rx.on(new URL(hook.url).pathname, () => ({ status: 500, body: 'boom' }));
    const failed = await test(hook.id);
    expect(failed.body).toMatchObject({ statusCode: 500, error: 'HTTP 500: boom' });

    const closed = await createHook({ url: 'http://127.0.0.1:9/closed' });
    const unreachable = await test(closed.id);
    expect(unreachable.status).toBe(200);
    expect(unreachable.body).toMatchObject({ statusCode: null, error: expect.stringMatching(/^request failed/) });
  });

  it('refuses an unknown event type or field with 422, an unknown webhook with 404', async () => {
    const hook = await createHook({});
    const bad = await test(hook.id, { body: { eventType: 'sent', extra: 1 } });
    expect(bad.status).toBe(422);
    expect(Object.keys(bad.body.errors).sort()).toEqual(['/eventType', '/extra']);
    const notObject = await test(hook.id, { body: ['delivered'] });
    expect(notObject.status).toBe(422);
    expect((await test(randomUUID())).status).toBe(404);
    expect(rx.at(new URL(hook.url).pathname)).toEqual([]);
  });

  it("refuses another account's webhook and a channel key with 403, sending nothing", async () => {
    const channelId = await newChannel(t);
    const hook = await createHook({ channelId });
    const other = await newAccount(t);
    const foreign = await test(hook.id, { key: other.key });
    expect(foreign.status).toBe(403);
    expect(foreign.body.code).toBe('forbidden');
    const ck = await channelKey(t, t.accountId, channelId);
    const byChannelKey = await test(hook.id, { key: ck });
    expect(byChannelKey.status).toBe(403);
    expect(byChannelKey.body.detail).toMatch(/account-level/);
    expect(rx.at(new URL(hook.url).pathname)).toEqual([]);
  });
});

describe('lastDelivery', () => {
  it('says when the last real delivery was made, for which event type, and what came back', async () => {
    const channelId = await newChannel(t);
    const hook = await createHook({ channelId });
    rx.on(new URL(hook.url).pathname, () => ({ status: 202 }));
    // Through the engine's real writer, as delivery appends a bounce (the port has no append verb).
    await seedEvents(t.daemon.store, [
      {
        accountId: t.accountId,
        channelId,
        messageId: randomUUID(),
        mailType: 'transactional',
        mailSource: 'api',
        eventType: 'bounced',
        timestamp: new Date().toISOString(),
        subject: 'Your order',
        recipients: ['ann@grove-mail.net'],
        tags: [],
        metadata: {},
        details: { smtpCode: 550 },
      },
    ]);
    await waitFor(async () => (await t.api('GET', `/webhooks/${hook.id}`)).body.lastDelivery !== null, { what: 'a delivery' });
    const read = (await t.api('GET', `/webhooks/${hook.id}`)).body;
    expect(read.lastDelivery).toEqual({ at: read.lastResponse.at, event: 'bounced', statusCode: 202, error: null });
    const listed = (await t.api('GET', '/webhooks?limit=500')).body.results.find((w: { id: string }) => w.id === hook.id);
    expect(listed.lastDelivery).toEqual(read.lastDelivery);
  });
});
