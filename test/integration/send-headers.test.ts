/**
 * The channel and idempotency headers under every name clients send them (api-surface.md,
 * "Request headers"): the SDKs' X-Helo-* names, the spec's X-Service-Channel-Id, and
 * Idempotency-Key / X-Service-Idempotency-Key; aliases that disagree are a 422 naming the header.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemonWithDns, stopDaemonWithDns, type TestDaemon } from '../support/daemon.js';
import type { TestDns } from '../support/dns-server.js';
import { channelKey, newAccount } from '../support/domains.js';
import { setupSender, type Sender } from '../support/sending.js';

let dns: TestDns;
let t: TestDaemon;
let s: Sender;
let other: Sender;

const send = (headers: Record<string, string>, body: unknown = basic()) => t.api('POST', '/send/transactional', { body, headers });
const basic = (subject = 'Hello') => ({ from: { email: `news@${s.domain}` }, to: [{ email: 'alice@example.net' }], subject, text: 'Hi' });
const messageCount = () => t.daemon.store.messages.count();
let seq = 0;
const freshKey = () => `hdr-${Date.now()}-${seq++}`;

beforeAll(async () => {
  ({ t, dns } = await startDaemonWithDns());
  s = await setupSender(t, dns);
  other = await setupSender(t, dns);
});

afterAll(() => stopDaemonWithDns({ t, dns }));

describe('channel header aliases', () => {
  it('sends through the channel named by X-Helo-Channel-Id, the header the SDKs send', async () => {
    const res = await send({ 'X-Helo-Channel-Id': s.channelId });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect((await t.daemon.store.messages.get(res.body.messageId))).toMatchObject({ channelId: s.channelId });
  });

  it('accepts both names when they carry the same channel', async () => {
    const res = await send({ 'X-Helo-Channel-Id': s.channelId, 'X-Service-Channel-Id': s.channelId });
    expect(res.status).toBe(200);
  });

  it('takes one channel id in upper case under one name and in lower case under the other as one channel', async () => {
    const res = await send({ 'X-Service-Channel-Id': s.channelId.toUpperCase(), 'X-Helo-Channel-Id': s.channelId });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(await t.daemon.store.messages.get(res.body.messageId)).toMatchObject({ channelId: s.channelId });
  });

  it('reads an empty header as no header: an empty idempotency key deduplicates nothing, an empty alias beside a channel id is no conflict', async () => {
    const before = await messageCount();
    const first = await send({ 'X-Helo-Channel-Id': s.channelId, 'X-Helo-Idempotency-Key': '' });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    const second = await send({ 'X-Service-Channel-Id': '', 'X-Helo-Channel-Id': s.channelId, 'Idempotency-Key': '' });
    expect(second.status, JSON.stringify(second.body)).toBe(200);
    expect(second.body.messageId).not.toBe(first.body.messageId);
    expect(await messageCount()).toBe(before + 2);
  });

  it('answers 422 naming X-Helo-Channel-Id when the two names disagree, and sends nothing', async () => {
    const before = await messageCount();
    const res = await send({ 'X-Service-Channel-Id': s.channelId, 'X-Helo-Channel-Id': other.channelId });
    expect(res.status).toBe(422);
    expect(res.body.code).toBe('validation_failed');
    expect(res.body.errors).toEqual({ '/X-Helo-Channel-Id': [{ code: 'conflict', message: expect.stringContaining('X-Service-Channel-Id') }] });
    expect(await messageCount()).toBe(before);
  });

  it('names the alias a channel key\'s request naming another channel came under, and an id that is no UUID', async () => {
    const keyOfS = await channelKey(t, (await t.daemon.store.channels.getRecord(s.channelId))!.accountId, s.channelId);
    const res = await t.api('POST', '/send/transactional', { key: keyOfS, body: basic(), headers: { 'X-Helo-Channel-Id': other.channelId } });
    expect([res.status, res.body.code]).toEqual([403, 'forbidden']);
    expect(res.body.detail).toBe('This API key belongs to another channel than X-Helo-Channel-Id names');
    const canonical = await t.api('POST', '/send/transactional', { key: keyOfS, body: basic(), headers: { 'X-Service-Channel-Id': other.channelId } });
    expect(canonical.body.detail).toBe('This API key belongs to another channel than X-Service-Channel-Id names');
    const malformed = await send({ 'X-Helo-Channel-Id': 'not-a-uuid' });
    expect(malformed.status).toBe(422);
    expect(malformed.body).toMatchObject({ detail: 'X-Helo-Channel-Id is not a channel id', errors: { '/X-Helo-Channel-Id': [{ code: 'invalid_format' }] } });
  });

  it('answers 404 channel_not_found and 403 for another account\'s channel under the SDK name as well', async () => {
    expect((await send({ 'X-Helo-Channel-Id': '00000000-0000-4000-8000-000000000000' })).status).toBe(404);
    const { key: token } = await newAccount(t);
    const res = await t.api('POST', '/send/transactional', { key: token, body: basic(), headers: { 'X-Helo-Channel-Id': s.channelId } });
    expect(res.status).toBe(403);
    expect((await t.api('POST', '/send/transactional', { key: null, body: basic(), headers: { 'X-Helo-Channel-Id': s.channelId } })).status).toBe(401);
  });
});

describe('idempotency header aliases', () => {
  it('replays the first answer for X-Helo-Idempotency-Key and sends nothing more', async () => {
    const key = freshKey();
    const first = await send({ 'X-Helo-Channel-Id': s.channelId, 'X-Helo-Idempotency-Key': key });
    const before = await messageCount();
    const second = await send({ 'X-Helo-Channel-Id': s.channelId, 'X-Helo-Idempotency-Key': key });
    expect(second.status).toBe(200);
    expect(second.body).toEqual(first.body);
    expect(await messageCount()).toBe(before);
  });

  it('treats one key as the same key under any of its three names', async () => {
    const key = freshKey();
    const first = await send({ 'X-Service-Channel-Id': s.channelId, 'Idempotency-Key': key });
    const before = await messageCount();
    for (const name of ['X-Service-Idempotency-Key', 'X-Helo-Idempotency-Key']) {
      const again = await send({ 'X-Service-Channel-Id': s.channelId, [name]: key });
      expect(again.body).toEqual(first.body);
    }
    expect(await messageCount()).toBe(before);
  });

  it('refuses the same key with a different body whichever name carries it', async () => {
    const key = freshKey();
    await send({ 'X-Service-Channel-Id': s.channelId, 'X-Helo-Idempotency-Key': key });
    const res = await send({ 'X-Service-Channel-Id': s.channelId, 'X-Helo-Idempotency-Key': key }, basic('Other'));
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual({ '/X-Helo-Idempotency-Key': [{ code: 'conflict', message: 'was already used with a different request' }] });
    expect(res.body.detail).toBe('This X-Helo-Idempotency-Key was used with a different request');
    for (const [name, route] of [['X-Service-Idempotency-Key', '/send/transactional'], ['Idempotency-Key', '/send/transactional'], ['X-Helo-Idempotency-Key', '/send/broadcast/message']]) {
      const again = await t.api('POST', route, { body: basic('Other'), headers: { 'X-Service-Channel-Id': s.channelId, [name]: key } });
      expect(again.status, `${name} ${route}`).toBe(422);
      expect(Object.keys(again.body.errors), `${name} ${route}`).toEqual([`/${name}`]);
    }
  });

  it('answers 422 with a pointer per disagreeing name, and sends nothing', async () => {
    const before = await messageCount();
    const res = await send({
      'X-Service-Channel-Id': s.channelId,
      'Idempotency-Key': 'a-1',
      'X-Service-Idempotency-Key': 'a-1',
      'X-Helo-Idempotency-Key': 'b-2',
    });
    expect(res.status).toBe(422);
    expect(Object.keys(res.body.errors)).toEqual(['/X-Helo-Idempotency-Key']);
    expect(res.body.errors['/X-Helo-Idempotency-Key'][0]).toEqual({ code: 'conflict', message: expect.stringContaining('Idempotency-Key') });
    const two = await send({ 'X-Service-Channel-Id': s.channelId, 'Idempotency-Key': 'a-1', 'X-Service-Idempotency-Key': 'c-3', 'X-Helo-Idempotency-Key': 'b-2' });
    expect(Object.keys(two.body.errors).sort()).toEqual(['/X-Helo-Idempotency-Key', '/X-Service-Idempotency-Key']);
    expect(await messageCount()).toBe(before);
  });

  it('names the alias a malformed key came under', async () => {
    const res = await send({ 'X-Service-Channel-Id': s.channelId, 'X-Helo-Idempotency-Key': 'x'.repeat(257) });
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual({ '/X-Helo-Idempotency-Key': [{ code: 'invalid_format', message: 'must be 1 to 256 visible ASCII characters' }] });
    expect(res.body.detail).toBe('X-Helo-Idempotency-Key must be 1 to 256 visible ASCII characters');
  });
});

describe('OpenAPI document', () => {
  it('lists every channel and idempotency header name on each send route', async () => {
    const doc = (await t.api('GET', '/openapi.json')).body;
    for (const path of ['/send/transactional', '/send/transactional/batch', '/send/broadcast', '/send/broadcast/message']) {
      const params = (doc.paths[path].post.parameters as Array<{ in: string; name: string; required?: boolean }>).filter((p) => p.in === 'header');
      expect(params.map((p) => p.name.toLowerCase()).sort(), path).toEqual(
        ['idempotency-key', 'x-helo-channel-id', 'x-helo-idempotency-key', 'x-service-channel-id', 'x-service-idempotency-key'],
      );
      expect(params.every((p) => !p.required)).toBe(true);
    }
  });
});
