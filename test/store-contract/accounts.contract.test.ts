/**
 * The store port's accounts, API keys, dashboard sessions and meta (store/port/accounts.ts,
 * store/port/meta.ts), run against every engine: normal behaviour, what an unknown id answers,
 * and each atomic rule under concurrent callers (the per-account key limit, revocation, the
 * tracking secret made once).
 */
import { expect, it } from 'vitest';
import { AppError } from '../../src/domain/errors.js';
import type { StorePort } from '../../src/store/port/index.js';
import { eachEngine } from './engines.js';

const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';
const HOUR = 3_600_000;

async function accountWithKey(store: StorePort) {
  const account = await store.accounts.create({ name: 'a', state: 'active' });
  const created = await store.apiKeys.create({ accountId: account.id, channelId: null, name: 'k' });
  return { account, ...created };
}

/** The settled results of racing calls, split into values and rejections. */
async function race<T>(calls: Array<() => Promise<T>>): Promise<{ ok: T[]; errors: unknown[] }> {
  const settled = await Promise.allSettled(calls.map((c) => c()));
  return {
    ok: settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : [])),
    errors: settled.flatMap((s) => (s.status === 'rejected' ? [s.reason as unknown] : [])),
  };
}

eachEngine('accounts', (ctx) => {
  it('creates an account and reads it back by id and in the list', async () => {
    const a = await ctx.store.accounts.create({ name: 'first', state: 'pending' });
    expect(a).toMatchObject({ name: 'first', state: 'pending' });
    expect(a.createdAt).toBe(a.updatedAt);
    expect(await ctx.store.accounts.get(a.id)).toEqual(a);
    expect(await ctx.store.accounts.list()).toEqual([a]);
  });

  it('keeps accounts over a restart', async () => {
    const a = await ctx.store.accounts.create({ name: 'kept', state: 'active' });
    const store = await ctx.reopen();
    expect(await store.accounts.get(a.id)).toEqual(a);
  });

  it('changes the state and updatedAt of an account, nothing else, seen by the next read', async () => {
    const a = await ctx.store.accounts.create({ name: 'x', state: 'active' });
    // Read first: an engine that keeps decoded records must see the change (store/lmdb/accounts.ts).
    expect(await ctx.store.accounts.get(a.id)).toEqual(a);
    const b = await ctx.store.accounts.setState(a.id, 'suspended');
    expect(b).toMatchObject({ id: a.id, name: 'x', state: 'suspended', createdAt: a.createdAt });
    expect(b!.updatedAt >= a.updatedAt).toBe(true);
    expect(await ctx.store.accounts.get(a.id)).toEqual(b);
  });

  it('answers undefined for an unknown account, and setState creates none', async () => {
    expect(await ctx.store.accounts.get(UNKNOWN_ID)).toBeUndefined();
    expect(await ctx.store.accounts.setState(UNKNOWN_ID, 'active')).toBeUndefined();
    expect(await ctx.store.accounts.list()).toEqual([]);
  });
});

eachEngine('API keys', (ctx) => {
  it('finds a key by its token, never by anything else, and stores no token', async () => {
    const { key, token } = await accountWithKey(ctx.store);
    expect(token).toMatch(/^pr_/);
    expect(key.prefix).toBe(token.slice(0, 10));
    expect(JSON.stringify(key)).not.toContain(token);
    expect(await ctx.store.apiKeys.findByToken(token)).toEqual(key);
    for (const other of ['', 'pr_', token + 'x', token.slice(0, -1), token.toUpperCase(), key.hash, key.id, 'pr_' + 'a'.repeat(300)]) {
      expect(await ctx.store.apiKeys.findByToken(other)).toBeUndefined();
    }
  });

  it('reads a key by id, revoked or not; unknown ids are undefined', async () => {
    const { key } = await accountWithKey(ctx.store);
    expect(await ctx.store.apiKeys.get(key.id)).toEqual(key);
    await ctx.store.apiKeys.revoke(key.id);
    expect((await ctx.store.apiKeys.get(key.id))?.revokedAt).toEqual(expect.any(String));
    expect(await ctx.store.apiKeys.get(UNKNOWN_ID)).toBeUndefined();
  });

  it('lists live keys oldest first, and every key with the filters', async () => {
    const { account, key: first } = await accountWithKey(ctx.store);
    const other = await accountWithKey(ctx.store);
    const second = (await ctx.store.apiKeys.create({ accountId: account.id, channelId: UNKNOWN_ID })).key;
    const third = (await ctx.store.apiKeys.create({ accountId: account.id, channelId: null })).key;
    await ctx.store.apiKeys.revoke(second.id);
    const oldestFirst = [first, third].sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
    expect(await ctx.store.apiKeys.listLive(account.id)).toEqual(oldestFirst);
    expect((await ctx.store.apiKeys.list({ accountId: account.id })).map((k) => k.id).sort()).toEqual([first.id, second.id, third.id].sort());
    expect((await ctx.store.apiKeys.list({ channelId: UNKNOWN_ID })).map((k) => k.id)).toEqual([second.id]);
    expect(await ctx.store.apiKeys.list()).toHaveLength(4);
    expect(await ctx.store.apiKeys.listLive(other.account.id)).toEqual([other.key]);
    expect(await ctx.store.apiKeys.listLive(UNKNOWN_ID)).toEqual([]);
  });

  it('finds no key once it is revoked, also after a lookup (no cache outlives a revoke) and a restart', async () => {
    const { key, token } = await accountWithKey(ctx.store);
    expect(await ctx.store.apiKeys.findByToken(token)).toEqual(key);
    const revoked = await ctx.store.apiKeys.revoke(key.id);
    expect(revoked).toMatchObject({ id: key.id, revokedAt: expect.any(String) });
    expect(await ctx.store.apiKeys.findByToken(token)).toBeUndefined();
    const store = await ctx.reopen();
    expect(await store.apiKeys.findByToken(token)).toBeUndefined();
  });

  it('revokes idempotently for the operator: the first revocation stays, unknown ids are undefined', async () => {
    const { key } = await accountWithKey(ctx.store);
    const first = await ctx.store.apiKeys.revoke(key.id);
    expect(await ctx.store.apiKeys.revoke(key.id)).toEqual(first);
    expect(await ctx.store.apiKeys.revoke(UNKNOWN_ID)).toBeUndefined();
  });

  it('revokes for the API only a live key of the account', async () => {
    const { account, key, token } = await accountWithKey(ctx.store);
    const stranger = await ctx.store.accounts.create({ name: 'b', state: 'active' });
    expect(await ctx.store.apiKeys.revokeLive({ id: key.id, accountId: stranger.id })).toEqual({ result: 'forbidden' });
    expect(await ctx.store.apiKeys.findByToken(token)).toEqual(key);
    expect(await ctx.store.apiKeys.revokeLive({ id: UNKNOWN_ID, accountId: account.id })).toEqual({ result: 'not_found' });
    const done = await ctx.store.apiKeys.revokeLive({ id: key.id, accountId: account.id });
    expect(done).toMatchObject({ result: 'revoked', key: { id: key.id, revokedAt: expect.any(String) } });
    expect(await ctx.store.apiKeys.findByToken(token)).toBeUndefined();
    expect(await ctx.store.apiKeys.revokeLive({ id: key.id, accountId: account.id })).toEqual({ result: 'not_found' });
    // Revoked: another account hears not_found as well (the API's 404 comes before its 403).
    expect(await ctx.store.apiKeys.revokeLive({ id: key.id, accountId: stranger.id })).toEqual({ result: 'not_found' });
  });

  it('never lets concurrent creations exceed the per-account limit', async () => {
    const account = await ctx.store.accounts.create({ name: 'a', state: 'active' });
    await ctx.store.apiKeys.create({ accountId: account.id, channelId: null, maxPerAccount: 4 });
    const { ok, errors } = await race(Array.from({ length: 12 }, () => () => ctx.store.apiKeys.create({ accountId: account.id, channelId: null, maxPerAccount: 4 })));
    expect(ok).toHaveLength(3);
    expect(errors).toHaveLength(9);
    for (const e of errors) expect(e).toMatchObject({ code: 'resource_limit_exceeded' });
    expect(errors[0]).toBeInstanceOf(AppError);
    expect(await ctx.store.apiKeys.listLive(account.id)).toHaveLength(4);
  });

  it('counts only live keys against the limit, and only the account\'s own', async () => {
    const { account, key } = await accountWithKey(ctx.store);
    const other = await accountWithKey(ctx.store);
    await expect(ctx.store.apiKeys.create({ accountId: account.id, channelId: null, maxPerAccount: 1 })).rejects.toMatchObject({ code: 'resource_limit_exceeded' });
    await ctx.store.apiKeys.revoke(key.id);
    await ctx.store.apiKeys.create({ accountId: account.id, channelId: null, maxPerAccount: 1 });
    expect(await ctx.store.apiKeys.listLive(other.account.id)).toEqual([other.key]);
  });

  it('revokes a key once when the API revokes it concurrently: one revoked, the others not_found', async () => {
    const { account, key, token } = await accountWithKey(ctx.store);
    const { ok } = await race(Array.from({ length: 8 }, () => () => ctx.store.apiKeys.revokeLive({ id: key.id, accountId: account.id })));
    expect(ok.filter((o) => o.result === 'revoked')).toHaveLength(1);
    expect(ok.filter((o) => o.result === 'not_found')).toHaveLength(7);
    expect(await ctx.store.apiKeys.findByToken(token)).toBeUndefined();
  });

  it('keeps one revocation time when the operator revokes concurrently', async () => {
    const { key } = await accountWithKey(ctx.store);
    const { ok } = await race(Array.from({ length: 8 }, () => () => ctx.store.apiKeys.revoke(key.id)));
    expect(new Set(ok.map((k) => k?.revokedAt)).size).toBe(1);
    expect((await ctx.store.apiKeys.get(key.id))?.revokedAt).toBe(ok[0]?.revokedAt);
  });

  it('answers lookups racing a revoke with the key or nothing, and nothing once the revoke resolved', async () => {
    const { key, token } = await accountWithKey(ctx.store);
    const lookups = Array.from({ length: 10 }, () => ctx.store.apiKeys.findByToken(token));
    await ctx.store.apiKeys.revoke(key.id);
    for (const found of await Promise.all(lookups)) if (found) expect(found.id).toBe(key.id);
    expect(await ctx.store.apiKeys.findByToken(token)).toBeUndefined();
  });
});

eachEngine('dashboard sessions', (ctx) => {
  const now = Date.UTC(2030, 0, 1);

  async function login(store: StorePort, keyId?: string, at = now) {
    const { account, key } = await accountWithKey(store);
    return { account, key, ...(await store.sessions.create({ keyId: keyId ?? key.id, accountId: account.id, nowMs: at, lifetimeMs: 12 * HOUR })) };
  }

  it('finds a session by its token only, with its times', async () => {
    const { key, token, session } = await login(ctx.store);
    expect(session).toEqual({ keyId: key.id, accountId: key.accountId, createdAtMs: now, lastSeenAtMs: now, expiresAtMs: now + 12 * HOUR });
    const found = await ctx.store.sessions.findByToken(token);
    expect(found?.session).toEqual(session);
    expect(found?.id).not.toContain(token);
    for (const other of ['', 'x'.repeat(10), token.slice(0, -1) + (token.endsWith('A') ? 'B' : 'A'), 'y'.repeat(200)]) {
      expect(await ctx.store.sessions.findByToken(other)).toBeUndefined();
    }
  });

  it('moves the last use forward, never back, and keeps sessions over a restart', async () => {
    const { token } = await login(ctx.store);
    const { id } = (await ctx.store.sessions.findByToken(token))!;
    await ctx.store.sessions.touch(id, now + 5 * 60_000);
    await ctx.store.sessions.touch(id, now + 60_000);
    const store = await ctx.reopen();
    expect((await store.sessions.findByToken(token))?.session.lastSeenAtMs).toBe(now + 5 * 60_000);
  });

  it('removes a session; touching or removing an unknown one changes nothing', async () => {
    const { token } = await login(ctx.store);
    const { id } = (await ctx.store.sessions.findByToken(token))!;
    await ctx.store.sessions.remove(id);
    expect(await ctx.store.sessions.findByToken(token)).toBeUndefined();
    await ctx.store.sessions.touch(id, now + 1);
    await ctx.store.sessions.remove(id);
    expect(await ctx.store.sessions.findByToken(token)).toBeUndefined();
  });

  it('sweeps the sessions that are expired, idle or whose key is revoked or gone, and keeps the others', async () => {
    const live = await login(ctx.store);
    const expired = await login(ctx.store, undefined, now - 12 * HOUR);
    const idle = await login(ctx.store, undefined, now - 2 * HOUR);
    await ctx.store.sessions.touch((await ctx.store.sessions.findByToken(idle.token))!.id, now - HOUR);
    const revoked = await login(ctx.store);
    await ctx.store.apiKeys.revoke(revoked.key.id);
    const keyless = await login(ctx.store, UNKNOWN_ID);
    expect(await ctx.store.sessions.sweep({ nowMs: now, idleMs: HOUR })).toBe(4);
    expect(await ctx.store.sessions.findByToken(live.token)).toBeDefined();
    for (const gone of [expired, idle, revoked, keyless]) expect(await ctx.store.sessions.findByToken(gone.token)).toBeUndefined();
    expect(await ctx.store.sessions.sweep({ nowMs: now, idleMs: HOUR })).toBe(0);
  });

  it('removes each ended session once when sweeps race', async () => {
    for (let i = 0; i < 3; i++) await login(ctx.store, UNKNOWN_ID);
    const live = await login(ctx.store);
    const { ok } = await race(Array.from({ length: 4 }, () => () => ctx.store.sessions.sweep({ nowMs: now, idleMs: HOUR })));
    expect(ok.reduce((a, b) => a + b, 0)).toBe(3);
    expect(await ctx.store.sessions.findByToken(live.token)).toBeDefined();
  });
});

eachEngine('meta', (ctx) => {
  it('is not bootstrapped until marked, then has the initial key pending until cleared', async () => {
    expect(await ctx.store.meta.isBootstrapped()).toBe(false);
    expect(await ctx.store.meta.isInitialKeyPending()).toBe(false);
    await ctx.store.meta.markBootstrapped(new Date());
    expect(await ctx.store.meta.isBootstrapped()).toBe(true);
    expect(await ctx.store.meta.isInitialKeyPending()).toBe(true);
    let store = await ctx.reopen();
    expect(await store.meta.isInitialKeyPending()).toBe(true);
    await store.meta.clearInitialKeyPending();
    await store.meta.clearInitialKeyPending();
    store = await ctx.reopen();
    expect(await store.meta.isBootstrapped()).toBe(true);
    expect(await store.meta.isInitialKeyPending()).toBe(false);
  });

  it('has no tracking secret before ensureTrackingSecret, then one that never changes', async () => {
    await expect(ctx.store.meta.trackingSecret()).rejects.toThrow();
    const secret = await ctx.store.meta.ensureTrackingSecret();
    expect(secret).toHaveLength(32);
    expect(await ctx.store.meta.trackingSecret()).toEqual(secret);
    expect(await ctx.store.meta.ensureTrackingSecret()).toEqual(secret);
    const store = await ctx.reopen();
    expect(await store.meta.ensureTrackingSecret()).toEqual(secret);
    expect(await store.meta.trackingSecret()).toEqual(secret);
  });

  it('makes one tracking secret when callers ensure it concurrently', async () => {
    const { ok } = await race(Array.from({ length: 8 }, () => () => ctx.store.meta.ensureTrackingSecret()));
    expect(ok).toHaveLength(8);
    for (const s of ok) expect(s).toEqual(ok[0]);
    expect(await ctx.store.meta.trackingSecret()).toEqual(ok[0]);
  });
});
