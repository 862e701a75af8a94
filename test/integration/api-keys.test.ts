import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import { channelKey, newAccount, newChannel } from '../support/domains.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let t: TestDaemon;

beforeAll(async () => {
  t = await startDaemon({ 'limits.apiKeysPerAccount': 4 });
});

afterAll(async () => {
  await t?.stop();
});

describe('/api-keys', () => {
  it('creates a key answered once, lists it without the secret, and the key works until revoked', async () => {
    const { key } = await newAccount(t);
    const created = await t.api('POST', '/api-keys', { key, body: { name: 'ci' } });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body).toEqual({ id: expect.stringMatching(UUID), name: 'ci', channelId: null, prefix: created.body.key.slice(0, 10), createdAt: expect.any(String), key: expect.stringMatching(/^pr_[A-Za-z0-9_-]{32}$/) });
    const secret = created.body.key as string;
    expect((await t.api('GET', '/channels', { key: secret })).status).toBe(200);

    const list = await t.api('GET', '/api-keys', { key });
    expect(list.status).toBe(200);
    expect(list.body.totalCount).toBe(2);
    expect(list.body.results.map((k: { id: string }) => k.id)).toContain(created.body.id);
    expect(JSON.stringify(list.body)).not.toContain(secret);

    expect((await t.api('DELETE', `/api-keys/${created.body.id}`, { key })).status).toBe(204);
    const refused = await t.api('GET', '/channels', { key: secret });
    expect(refused.status).toBe(401);
    expect((await t.api('GET', '/api-keys', { key })).body.totalCount).toBe(1);
    // Revoked is gone: a second DELETE is 404.
    const again = await t.api('DELETE', `/api-keys/${created.body.id}`, { key });
    expect(again.status).toBe(404);
    expect(again.body.code).toBe('not_found');
  });

  it('makes a key of one of the account\'s channels, which acts on that channel only', async () => {
    const { key } = await newAccount(t);
    const mine = await newChannel(t, key, 'mine');
    const other = await newChannel(t, key, 'other');
    const created = await t.api('POST', '/api-keys', { key, body: { channelId: mine } });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body).toMatchObject({ channelId: mine, name: '' });
    expect((await t.api('GET', `/channels/${mine}`, { key: created.body.key })).status).toBe(200);
    expect((await t.api('GET', `/channels/${other}`, { key: created.body.key })).status).toBe(403);
  });

  it('needs an account-level key for every verb (403 forbidden for a channel key)', async () => {
    const { accountId, key } = await newAccount(t);
    const channel = await newChannel(t, key);
    const chKey = await channelKey(t, accountId, channel);
    const own = (await t.api('GET', '/api-keys', { key })).body.results[0].id as string;
    for (const [method, path, body] of [['GET', '/api-keys', undefined], ['POST', '/api-keys', {}], ['DELETE', `/api-keys/${own}`, undefined]] as const) {
      const res = await t.api(method, path, { key: chKey, body });
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(res.body.code).toBe('forbidden');
    }
    expect((await t.api('GET', '/channels', { key })).status).toBe(200);
  });

  it('keeps accounts apart: another account\'s key or channel is 403, an unknown one 404', async () => {
    const a = await newAccount(t);
    const b = await newAccount(t);
    const bChannel = await newChannel(t, b.key);
    const bKey = (await t.api('GET', '/api-keys', { key: b.key })).body.results[0].id as string;
    const revoke = await t.api('DELETE', `/api-keys/${bKey}`, { key: a.key });
    expect(revoke.status).toBe(403);
    expect(revoke.body.code).toBe('forbidden');
    expect((await t.api('GET', '/channels', { key: b.key })).status).toBe(200);
    const onB = await t.api('POST', '/api-keys', { key: a.key, body: { channelId: bChannel } });
    expect(onB.status).toBe(403);
    const unknown = await t.api('POST', '/api-keys', { key: a.key, body: { channelId: '00000000-0000-4000-8000-000000000000' } });
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('channel_not_found');
    expect((await t.api('DELETE', '/api-keys/00000000-0000-4000-8000-000000000000', { key: a.key })).status).toBe(404);
    // A path id that is not a UUID is refused as such (client-compat.ts), as on every resource.
    expect((await t.api('DELETE', '/api-keys/not-a-uuid', { key: a.key })).status).toBe(422);
    expect((await t.api('GET', '/api-keys', { key: a.key })).body.results.map((k: { id: string }) => k.id)).not.toContain(bKey);
  });

  it('refuses unknown fields and bad values, and keys beyond limits.apiKeysPerAccount', async () => {
    const { key } = await newAccount(t);
    const bad = await t.api('POST', '/api-keys', { key, body: { name: '', channelId: 'x', scope: 'all' } });
    expect(bad.status).toBe(422);
    expect(Object.keys(bad.body.errors).sort()).toEqual(['/channelId', '/name', '/scope']);
    for (let i = 0; i < 3; i++) expect((await t.api('POST', '/api-keys', { key, body: {} })).status).toBe(200);
    const over = await t.api('POST', '/api-keys', { key, body: {} });
    expect(over.status).toBe(403);
    expect(over.body.code).toBe('resource_limit_exceeded');
    expect(over.body.detail).toBe('An account may have at most 4 API keys; revoke one first');
  });
});
