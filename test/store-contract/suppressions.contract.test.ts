/**
 * SuppressionsPort (store/port/suppressions.ts): reads, the list and its pages, and apply: a
 * request's adds and removes in one commit, each an insert-if-absent or a delete-if-present,
 * so concurrent requests about one address never both report a change.
 */
import { randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';
import type { MailType, SuppressionReason } from '../../src/domain/types.js';
import type { StorePort } from '../../src/store/port/index.js';
import { eachEngine } from './engines.js';

const add = (email: string, reason: SuppressionReason = 'manual') => ({ op: 'add' as const, email, reason });
const remove = (email: string) => ({ op: 'remove' as const, email });

async function seed(store: StorePort, channelId: string, mailType: MailType, entries: Array<[string, SuppressionReason]>): Promise<void> {
  await store.suppressions.apply(channelId, mailType, entries.map(([email, reason]) => add(email, reason)));
}

eachEngine('suppressions', (ctx) => {
  const channel = randomUUID();

  it('knows nothing of an address never suppressed', async () => {
    expect(await ctx.store.suppressions.is(channel, 'transactional', 'ann@example.org')).toBe(false);
    expect(await ctx.store.suppressions.get(channel, 'transactional', 'ann@example.org')).toBeUndefined();
    expect(await ctx.store.suppressions.list(channel)).toEqual([]);
    expect(await ctx.store.suppressions.page({ channelId: channel, mailType: 'transactional', limit: 10, offset: 0 })).toEqual({ totalCount: 0, results: [] });
  });

  it('adds an address lower-cased, for one channel and mail type, found in any case', async () => {
    expect(await ctx.store.suppressions.apply(channel, 'transactional', [add('Ann@Example.ORG', 'bounce')])).toEqual([true]);
    const s = await ctx.store.suppressions.get(channel, 'transactional', 'ANN@example.org');
    expect(s).toEqual({ channelId: channel, mailType: 'transactional', email: 'ann@example.org', reason: 'bounce', createdAt: expect.any(String) });
    expect(Number.isNaN(Date.parse(s!.createdAt))).toBe(false);
    expect(await ctx.store.suppressions.is(channel, 'transactional', 'ann@EXAMPLE.org')).toBe(true);
    expect(await ctx.store.suppressions.is(channel, 'broadcast', 'ann@example.org')).toBe(false);
    expect(await ctx.store.suppressions.is(randomUUID(), 'transactional', 'ann@example.org')).toBe(false);
  });

  it('keeps the first reason when an address is added again, and says it changed nothing', async () => {
    await ctx.store.suppressions.apply(channel, 'broadcast', [add('bob@example.org', 'complaint')]);
    expect(await ctx.store.suppressions.apply(channel, 'broadcast', [add('BOB@example.org', 'manual')])).toEqual([false]);
    expect((await ctx.store.suppressions.get(channel, 'broadcast', 'bob@example.org'))?.reason).toBe('complaint');
  });

  it('removes an address once; removing one not suppressed changes nothing', async () => {
    await seed(ctx.store, channel, 'transactional', [['cat@example.org', 'manual']]);
    expect(await ctx.store.suppressions.apply(channel, 'transactional', [remove('Cat@example.org')])).toEqual([true]);
    expect(await ctx.store.suppressions.apply(channel, 'transactional', [remove('cat@example.org')])).toEqual([false]);
    expect(await ctx.store.suppressions.is(channel, 'transactional', 'cat@example.org')).toBe(false);
  });

  it('applies the changes of one request in order, each seeing the ones before it', async () => {
    const ops = [add('dan@example.org'), add('DAN@example.org'), remove('dan@example.org'), remove('dan@example.org'), add('eve@example.org')];
    expect(await ctx.store.suppressions.apply(channel, 'transactional', ops)).toEqual([true, false, true, false, true]);
    expect((await ctx.store.suppressions.list(channel, 'transactional')).map((s) => s.email)).toEqual(['eve@example.org']);
  });

  it('lists a channel by mail type, then address, and one mail type alone', async () => {
    await seed(ctx.store, channel, 'transactional', [['zed@example.org', 'manual'], ['amy@example.org', 'bounce']]);
    await seed(ctx.store, channel, 'broadcast', [['kim@example.org', 'unsubscribe']]);
    await seed(ctx.store, randomUUID(), 'transactional', [['other@example.org', 'manual']]);
    const all = await ctx.store.suppressions.list(channel);
    expect(all.map((s) => [s.mailType, s.email])).toEqual([
      ['broadcast', 'kim@example.org'],
      ['transactional', 'amy@example.org'],
      ['transactional', 'zed@example.org'],
    ]);
    expect((await ctx.store.suppressions.list(channel, 'broadcast')).map((s) => s.email)).toEqual(['kim@example.org']);
  });

  it('pages in address order with the number of matches, filtered by reason and by part of the address', async () => {
    const emails = ['a1@x.org', 'a2@y.org', 'a3@x.org', 'a4@x.org', 'a5@y.org'];
    await seed(ctx.store, channel, 'transactional', emails.map((e, i): [string, SuppressionReason] => [e, i % 2 === 0 ? 'bounce' : 'complaint']));
    await seed(ctx.store, channel, 'broadcast', [['a6@x.org', 'bounce']]);
    const page = (q: object) => ctx.store.suppressions.page({ channelId: channel, mailType: 'transactional', limit: 2, offset: 0, ...q });
    const first = await page({});
    expect(first.totalCount).toBe(5);
    expect(first.results.map((s) => s.email)).toEqual(['a1@x.org', 'a2@y.org']);
    expect((await page({ offset: 4 })).results.map((s) => s.email)).toEqual(['a5@y.org']);
    const bounces = await page({ reason: 'bounce', limit: 10 });
    expect([bounces.totalCount, bounces.results.map((s) => s.email)]).toEqual([3, ['a1@x.org', 'a3@x.org', 'a5@y.org']]);
    const atX = await page({ email: '@X.ORG', limit: 10 });
    expect([atX.totalCount, atX.results.map((s) => s.email)]).toEqual([3, ['a1@x.org', 'a3@x.org', 'a4@x.org']]);
    expect((await page({ email: 'nobody', limit: 10 })).totalCount).toBe(0);
  });

  it('keeps what was applied across a restart', async () => {
    await seed(ctx.store, channel, 'transactional', [['kept@example.org', 'complaint']]);
    const store = await ctx.reopen();
    expect((await store.suppressions.get(channel, 'transactional', 'kept@example.org'))?.reason).toBe('complaint');
  });

  it('reports one add as a change when requests adding the same address race', async () => {
    const racing = Array.from({ length: 8 }, (_, i) => ctx.store.suppressions.apply(channel, 'transactional', [add(i % 2 ? 'RACE@example.org' : 'race@example.org', i % 2 ? 'manual' : 'bounce')]));
    const results = (await Promise.all(racing)).map(([changed]) => changed);
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await ctx.store.suppressions.list(channel)).toHaveLength(1);
  });

  it('reports one remove as a change when requests removing the same address race', async () => {
    await seed(ctx.store, channel, 'broadcast', [['gone@example.org', 'manual']]);
    const results = await Promise.all(Array.from({ length: 8 }, () => ctx.store.suppressions.apply(channel, 'broadcast', [remove('gone@example.org')])));
    expect(results.map(([changed]) => changed).filter(Boolean)).toHaveLength(1);
  });

  it('never interleaves two racing requests: each sees the other whole or not at all', async () => {
    const emails = Array.from({ length: 20 }, (_, i) => `m${i}@example.org`);
    const [adds, removes] = await Promise.all([
      ctx.store.suppressions.apply(channel, 'transactional', emails.map((e) => add(e))),
      ctx.store.suppressions.apply(channel, 'transactional', emails.map((e) => remove(e))),
    ]);
    expect(adds.every(Boolean)).toBe(true);
    // The removes ran after the adds (all true, nothing left) or before them (all false, all kept).
    expect(new Set(removes).size).toBe(1);
    expect(await ctx.store.suppressions.list(channel)).toHaveLength(removes[0] ? 0 : 20);
  });
});
