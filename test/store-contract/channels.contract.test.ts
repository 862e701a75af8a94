/**
 * The store port's channels (store/port/channels.ts), run against every engine: create, read,
 * list, update; deletion (the tombstone, what goes with it, the pending purge and its batches);
 * what an unknown or malformed id answers; and the atomic rules under concurrent callers (the
 * per-account channel limit, one winner among racing deletes).
 */
import { expect, it } from 'vitest';
import { AppError } from '../../src/domain/errors.js';
import type { Channel } from '../../src/domain/types.js';
import type { NewChannel } from '../../src/store/port/channels.js';
import type { StorePort } from '../../src/store/port/index.js';
import { eachEngine } from './engines.js';

const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';
const MALFORMED_ID = 'not-a-channel-id';
const MAX = 100;

function newChannel(accountId: string, over: Partial<NewChannel> = {}): NewChannel {
  return { accountId, name: 'main', deliveryType: 'live', tracking: { links: false, opens: false }, maxPerAccount: MAX, ...over };
}

async function account(store: StorePort): Promise<string> {
  return (await store.accounts.create({ name: 'a', state: 'active' })).id;
}

/** The settled results of racing calls, split into values and rejections. */
async function race<T>(calls: Array<() => Promise<T>>): Promise<{ ok: T[]; errors: unknown[] }> {
  const settled = await Promise.allSettled(calls.map((c) => c()));
  return {
    ok: settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : [])),
    errors: settled.flatMap((s) => (s.status === 'rejected' ? [s.reason as unknown] : [])),
  };
}

/** Code-unit order, as the engines order keys (localeCompare may skip the ids' hyphens). */
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function codeOf(err: unknown): string | undefined {
  return err instanceof AppError ? err.code : undefined;
}

eachEngine('channels', (ctx) => {
  it('creates a live channel and reads it back by id, as a record and in the list', async () => {
    const accountId = await account(ctx.store);
    const c = await ctx.store.channels.create(newChannel(accountId, { name: 'Main', deliveryType: 'sandbox', tracking: { links: true, opens: false } }));
    expect(c).toMatchObject({ accountId, name: 'Main', deliveryType: 'sandbox', tracking: { links: true, opens: false } });
    expect(c.createdAt).toBe(c.updatedAt);
    expect(await ctx.store.channels.get(c.id)).toEqual(c);
    expect(await ctx.store.channels.getRecord(c.id)).toEqual(c);
    expect(await ctx.store.channels.isDeleted(c.id)).toBe(false);
    expect(await ctx.store.channels.list({ accountId, limit: 10, offset: 0 })).toEqual({ results: [c], totalCount: 1 });
  });

  it('keeps channels over a restart', async () => {
    const c = await ctx.store.channels.create(newChannel(await account(ctx.store)));
    const store = await ctx.reopen();
    expect(await store.channels.get(c.id)).toEqual(c);
  });

  it('answers undefined or false for an unknown or malformed id, and creates nothing for it', async () => {
    for (const id of [UNKNOWN_ID, MALFORMED_ID]) {
      expect(await ctx.store.channels.get(id)).toBeUndefined();
      expect(await ctx.store.channels.getRecord(id)).toBeUndefined();
      expect(await ctx.store.channels.isDeleted(id)).toBe(false);
      expect(await ctx.store.channels.update(id, { name: 'x' })).toBeUndefined();
      expect(await ctx.store.channels.delete(id)).toBe(false);
      expect(await ctx.store.channels.getRecord(id)).toBeUndefined();
    }
    expect(await ctx.store.channels.deletedAmong([UNKNOWN_ID, MALFORMED_ID])).toEqual(new Set());
    expect(await ctx.store.channels.pendingPurges()).toEqual([]);
  });

  it('lists an account’s channels oldest first, filtered by ids, name and delivery type, one page with the total', async () => {
    const accountId = await account(ctx.store);
    const other = await account(ctx.store);
    const made: Channel[] = [];
    for (const [name, deliveryType] of [['Alpha', 'live'], ['beta', 'sandbox'], ['ALPHABET', 'sandbox'], ['gamma', 'live']] as const) {
      made.push(await ctx.store.channels.create(newChannel(accountId, { name, deliveryType })));
    }
    await ctx.store.channels.create(newChannel(other, { name: 'alpha' }));
    // Oldest first; channels made in the same millisecond in id order.
    made.sort((x, y) => compare(x.createdAt, y.createdAt) || compare(x.id, y.id));
    const [alpha, beta, alphabet, gamma] = ['Alpha', 'beta', 'ALPHABET', 'gamma'].map((n) => made.find((c) => c.name === n)!);
    const list = (f: { ids?: string[]; name?: string; deliveryType?: 'live' | 'sandbox'; limit?: number; offset?: number }) =>
      ctx.store.channels.list({ accountId, limit: 10, offset: 0, ...f });
    expect(await list({})).toEqual({ results: made, totalCount: 4 });
    expect(await list({ name: 'alpha' })).toEqual({ results: made.filter((c) => c === alpha || c === alphabet), totalCount: 2 });
    expect(await list({ deliveryType: 'sandbox' })).toEqual({ results: made.filter((c) => c === beta || c === alphabet), totalCount: 2 });
    expect(await list({ ids: [gamma.id, beta.id, UNKNOWN_ID] })).toEqual({ results: made.filter((c) => c === beta || c === gamma), totalCount: 2 });
    expect(await list({ limit: 2, offset: 1 })).toEqual({ results: [made[1], made[2]], totalCount: 4 });
    expect(await list({ offset: 4 })).toEqual({ results: [], totalCount: 4 });
  });

  it('updates the fields a patch names, merges tracking and moves updatedAt', async () => {
    const c = await ctx.store.channels.create(newChannel(await account(ctx.store), { tracking: { links: true, opens: false } }));
    const u = await ctx.store.channels.update(c.id, { name: 'renamed', tracking: { opens: true } });
    expect(u).toEqual({ ...c, name: 'renamed', tracking: { links: true, opens: true }, updatedAt: u!.updatedAt });
    expect(u!.updatedAt >= c.updatedAt).toBe(true);
    expect(await ctx.store.channels.get(c.id)).toEqual(u);
    const v = await ctx.store.channels.update(c.id, { deliveryType: 'sandbox' });
    expect(v).toMatchObject({ name: 'renamed', deliveryType: 'sandbox', tracking: { links: true, opens: true } });
  });

  it('keeps an ipPool (issue 35): set at create, replaced by a patch, kept by one that does not name it, removed by null', async () => {
    const c = await ctx.store.channels.create(newChannel(await account(ctx.store), { ipPool: 'tx' }));
    expect(c.ipPool).toBe('tx');
    expect(await ctx.store.channels.get(c.id)).toEqual(c);
    expect((await ctx.store.channels.update(c.id, { ipPool: 'bulk' }))?.ipPool).toBe('bulk');
    expect((await ctx.store.channels.update(c.id, { name: 'other' }))?.ipPool).toBe('bulk');
    const cleared = await ctx.store.channels.update(c.id, { ipPool: null });
    expect(cleared).not.toHaveProperty('ipPool');
    expect(await ctx.store.channels.get(c.id)).not.toHaveProperty('ipPool');
    expect(await ctx.store.channels.create(newChannel(await account(ctx.store)))).not.toHaveProperty('ipPool');
  });
});

eachEngine('channel deletion', (ctx) => {
  it('leaves a tombstone: no live read, the record with deletedAt, isDeleted, not listed; a second delete is false', async () => {
    const accountId = await account(ctx.store);
    const c = await ctx.store.channels.create(newChannel(accountId));
    const kept = await ctx.store.channels.create(newChannel(accountId, { name: 'kept' }));
    // Read first: an engine that keeps decoded records must see the tombstone (store/lmdb/channel-records.ts).
    expect(await ctx.store.channels.get(c.id)).toEqual(c);
    expect(await ctx.store.channels.isDeleted(c.id)).toBe(false);
    expect(await ctx.store.channels.delete(c.id)).toBe(true);
    expect(await ctx.store.channels.get(c.id)).toBeUndefined();
    expect(await ctx.store.channels.getRecord(c.id)).toMatchObject({ id: c.id, name: c.name, accountId, deletedAt: expect.any(String) });
    expect(await ctx.store.channels.isDeleted(c.id)).toBe(true);
    expect(await ctx.store.channels.list({ accountId, limit: 10, offset: 0 })).toEqual({ results: [kept], totalCount: 1 });
    expect(await ctx.store.channels.update(c.id, { name: 'back' })).toBeUndefined();
    expect(await ctx.store.channels.delete(c.id)).toBe(false);
    const store = await ctx.reopen();
    expect(await store.channels.isDeleted(c.id)).toBe(true);
  });

  it('says which of many ids are deleted channels, at one moment', async () => {
    const accountId = await account(ctx.store);
    const [a, b, c] = [await ctx.store.channels.create(newChannel(accountId)), await ctx.store.channels.create(newChannel(accountId)), await ctx.store.channels.create(newChannel(accountId))];
    await ctx.store.channels.delete(a.id);
    await ctx.store.channels.delete(c.id);
    expect(await ctx.store.channels.deletedAmong([a.id, b.id, c.id, a.id, UNKNOWN_ID])).toEqual(new Set([a.id, c.id]));
    expect(await ctx.store.channels.deletedAmong([])).toEqual(new Set());
  });

  it('removes the channel’s API keys in the same commit', async () => {
    const accountId = await account(ctx.store);
    const c = await ctx.store.channels.create(newChannel(accountId));
    const channelKey = await ctx.store.apiKeys.create({ accountId, channelId: c.id });
    const accountKey = await ctx.store.apiKeys.create({ accountId, channelId: null });
    await ctx.store.channels.delete(c.id);
    expect(await ctx.store.apiKeys.get(channelKey.key.id)).toBeUndefined();
    expect(await ctx.store.apiKeys.findByToken(channelKey.token)).toBeUndefined();
    expect(await ctx.store.apiKeys.get(accountKey.key.id)).toEqual(accountKey.key);
  });

  it('schedules the purge, which runs in bounded batches until done and keeps the tombstone', async () => {
    const accountId = await account(ctx.store);
    const c = await ctx.store.channels.create(newChannel(accountId));
    await ctx.store.channels.delete(c.id);
    expect(await ctx.store.channels.pendingPurges()).toEqual([c.id]);
    let batches = 0;
    for (;;) {
      const r = await ctx.store.channels.purgeBatch(c.id, 2);
      expect(r.removed).toBeLessThanOrEqual(2);
      batches++;
      if (r.done) break;
      expect(batches).toBeLessThan(100);
    }
    expect(await ctx.store.channels.pendingPurges()).toEqual([]);
    expect(await ctx.store.channels.purgeBatch(c.id, 2)).toEqual({ removed: 0, done: true });
    expect(await ctx.store.channels.isDeleted(c.id)).toBe(true);
    expect(await ctx.store.channels.remains(c.id)).toEqual({ messages: 0, bodies: 0, jobs: 0, events: 0, stats: 0, indexEntries: 0, inboundMessages: 0, inboundCounts: 0 });
  });

  it('finishes at once the purge of a channel that has none', async () => {
    expect(await ctx.store.channels.purgeBatch(UNKNOWN_ID, 10)).toEqual({ removed: 0, done: true });
    const c = await ctx.store.channels.create(newChannel(await account(ctx.store)));
    expect(await ctx.store.channels.purgeBatch(c.id, 10)).toEqual({ removed: 0, done: true });
    expect(await ctx.store.channels.get(c.id)).toEqual(c);
  });

  it('keeps a pending purge over a restart', async () => {
    const c = await ctx.store.channels.create(newChannel(await account(ctx.store)));
    await ctx.store.channels.delete(c.id);
    const store = await ctx.reopen();
    expect(await store.channels.pendingPurges()).toEqual([c.id]);
  });

  it('lets exactly one of racing deletes of a channel win, and schedules one purge', async () => {
    const c = await ctx.store.channels.create(newChannel(await account(ctx.store)));
    const { ok, errors } = await race(Array.from({ length: 8 }, () => () => ctx.store.channels.delete(c.id)));
    expect(errors).toEqual([]);
    expect(ok.filter(Boolean)).toHaveLength(1);
    expect(await ctx.store.channels.pendingPurges()).toEqual([c.id]);
  });
});

eachEngine('channel limit', (ctx) => {
  it('refuses the channel over the limit with resource_limit_exceeded; other accounts and deleted channels do not count', async () => {
    const accountId = await account(ctx.store);
    const other = await account(ctx.store);
    await ctx.store.channels.create(newChannel(other, { maxPerAccount: 2 }));
    const first = await ctx.store.channels.create(newChannel(accountId, { maxPerAccount: 2 }));
    await ctx.store.channels.create(newChannel(accountId, { maxPerAccount: 2 }));
    const refused = await ctx.store.channels.create(newChannel(accountId, { maxPerAccount: 2 })).catch((err: unknown) => err);
    expect(codeOf(refused)).toBe('resource_limit_exceeded');
    expect((await ctx.store.channels.list({ accountId, limit: 10, offset: 0 })).totalCount).toBe(2);
    await ctx.store.channels.delete(first.id);
    await expect(ctx.store.channels.create(newChannel(accountId, { maxPerAccount: 2 }))).resolves.toMatchObject({ accountId });
  });

  it('never exceeds the limit under racing creates: exactly the free places are taken', async () => {
    const accountId = await account(ctx.store);
    const first = await ctx.store.channels.create(newChannel(accountId, { maxPerAccount: 5 }));
    const { ok, errors } = await race(Array.from({ length: 12 }, (_, i) => () => ctx.store.channels.create(newChannel(accountId, { name: `c${i}`, maxPerAccount: 5 }))));
    expect(ok).toHaveLength(4);
    expect(errors).toHaveLength(8);
    expect(errors.map(codeOf)).toEqual(Array(8).fill('resource_limit_exceeded'));
    const { results, totalCount } = await ctx.store.channels.list({ accountId, limit: 100, offset: 0 });
    expect(totalCount).toBe(5);
    expect(new Set(results.map((c) => c.id))).toEqual(new Set([first.id, ...ok.map((c) => c.id)]));
  });

  it('counts each account on its own under racing creates in two accounts', async () => {
    const a = await account(ctx.store);
    const b = await account(ctx.store);
    const calls = Array.from({ length: 10 }, (_, i) => () => ctx.store.channels.create(newChannel(i % 2 ? a : b, { maxPerAccount: 3 })));
    const { ok } = await race(calls);
    expect(ok.filter((c) => c.accountId === a)).toHaveLength(3);
    expect(ok.filter((c) => c.accountId === b)).toHaveLength(3);
  });
});
