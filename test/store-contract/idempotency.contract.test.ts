/**
 * IdempotencyPort (store/port/idempotency.ts): a key is claimed insert-if-absent, its record is
 * written by the commit verb with the effect it remembers, and the claim is then released. Raced
 * the way the send API races it (submission/idempotency.ts): of concurrent requests with one key
 * exactly one does the work, and the others replay its record, or do the work themselves when the
 * first one failed and wrote nothing.
 */
import { expect, it } from 'vitest';
import type { StorePort } from '../../src/store/port/index.js';
import type { IdempotencyRecord } from '../../src/store/port/idempotency.js';
import { ACCOUNT, accepted, idempotencyRecord } from './submissions.js';
import { eachEngine } from './engines.js';

const LEASE_MS = 300_000;

/**
 * One request as the gate runs it: claim (waiting while another holds the key), then either
 * replay the record or do the work (commit a message with the record) and release.
 */
async function request(store: StorePort, key: string, o: { fail?: boolean; fingerprint?: string } = {}): Promise<{ replayed: boolean; record: IdempotencyRecord }> {
  const k = { accountId: ACCOUNT, key };
  for (;;) {
    const nowMs = Date.now();
    const taken = await store.idempotency.claim({ ...k, nowMs, leaseMs: LEASE_MS });
    if (taken.status === 'busy') {
      await store.idempotency.settled(k);
      continue;
    }
    if (taken.status === 'recorded') return { replayed: true, record: taken.record };
    try {
      if (o.fail) throw new Error('the request failed before its commit');
      const record = idempotencyRecord(nowMs, { messageId: 'x' }, o.fingerprint);
      await store.messages.commit({ messages: [accepted()], idempotency: { ...k, record } });
      return { replayed: false, record };
    } finally {
      await store.idempotency.release(taken.claim);
    }
  }
}

eachEngine('idempotency', (ctx) => {
  const key = { accountId: ACCOUNT, key: 'key-1' };

  it('claims a free key, and says another request holds it until the claim is released', async () => {
    const first = await ctx.store.idempotency.claim({ ...key, nowMs: Date.now(), leaseMs: LEASE_MS });
    expect(first.status).toBe('claimed');
    expect(await ctx.store.idempotency.claim({ ...key, nowMs: Date.now(), leaseMs: LEASE_MS })).toEqual({ status: 'busy' });
    if (first.status !== 'claimed') return;
    await ctx.store.idempotency.release(first.claim);
    expect((await ctx.store.idempotency.claim({ ...key, nowMs: Date.now(), leaseMs: LEASE_MS })).status).toBe('claimed');
  });

  it('gives a key to exactly one of racing claims', async () => {
    const results = await Promise.all(Array.from({ length: 6 }, () => ctx.store.idempotency.claim({ ...key, nowMs: Date.now(), leaseMs: LEASE_MS })));
    expect(results.filter((r) => r.status === 'claimed')).toHaveLength(1);
    expect(results.filter((r) => r.status === 'busy')).toHaveLength(5);
  });

  it('scopes a key to its account', async () => {
    const a = await ctx.store.idempotency.claim({ ...key, nowMs: Date.now(), leaseMs: LEASE_MS });
    const b = await ctx.store.idempotency.claim({ accountId: 'acc-other', key: key.key, nowMs: Date.now(), leaseMs: LEASE_MS });
    expect([a.status, b.status]).toEqual(['claimed', 'claimed']);
  });

  it('ignores the release of a claim that is not the one holding the key', async () => {
    const held = await ctx.store.idempotency.claim({ ...key, nowMs: Date.now(), leaseMs: LEASE_MS });
    expect(held.status).toBe('claimed');
    await ctx.store.idempotency.release({ ...key, claimNo: 'not-this-claim' });
    expect((await ctx.store.idempotency.claim({ ...key, nowMs: Date.now(), leaseMs: LEASE_MS })).status).toBe('busy');
  });

  it('answers the stored record once the work committed it, until it expires', async () => {
    const nowMs = Date.now();
    const taken = await ctx.store.idempotency.claim({ ...key, nowMs, leaseMs: LEASE_MS });
    if (taken.status !== 'claimed') throw new Error('not claimed');
    const record = idempotencyRecord(nowMs, { messageId: 'm1' });
    await ctx.store.messages.commit({ messages: [accepted()], idempotency: { ...key, record } });
    await ctx.store.idempotency.release(taken.claim);
    expect(await ctx.store.idempotency.claim({ ...key, nowMs, leaseMs: LEASE_MS })).toEqual({ status: 'recorded', record });
    expect(await ctx.store.idempotency.get({ ...key, nowMs })).toEqual(record);
    const later = record.expiresAtMs + 1;
    expect(await ctx.store.idempotency.get({ ...key, nowMs: later })).toBeUndefined();
    expect((await ctx.store.idempotency.claim({ ...key, nowMs: later, leaseMs: LEASE_MS })).status).toBe('claimed');
  });

  it('keeps a record across a restart', async () => {
    const nowMs = Date.now();
    const record = idempotencyRecord(nowMs);
    await ctx.store.messages.commit({ messages: [accepted()], idempotency: { ...key, record } });
    const store = await ctx.reopen();
    expect(await store.idempotency.get({ ...key, nowMs })).toEqual(record);
  });

  it('resolves settled() at once for a free key, and once the claim holding it is released', async () => {
    await ctx.store.idempotency.settled(key);
    const taken = await ctx.store.idempotency.claim({ ...key, nowMs: Date.now(), leaseMs: LEASE_MS });
    if (taken.status !== 'claimed') throw new Error('not claimed');
    let settled = false;
    const waiting = ctx.store.idempotency.settled(key).then(() => (settled = true));
    await ctx.store.idempotency.get({ ...key, nowMs: Date.now() });
    expect(settled).toBe(false);
    await ctx.store.idempotency.release(taken.claim);
    await waiting;
    expect(settled).toBe(true);
  });

  it('does the work of racing requests with one key once; the others replay its record', async () => {
    const results = await Promise.all(Array.from({ length: 6 }, () => request(ctx.store, 'race')));
    expect(results.filter((r) => !r.replayed)).toHaveLength(1);
    const first = results.find((r) => !r.replayed)!.record;
    for (const r of results) expect(r.record).toEqual(first);
    expect(await ctx.store.messages.count()).toBe(1);
  });

  it('lets a waiting request do the work itself when the one holding the key failed and wrote nothing', async () => {
    const [failed, second] = await Promise.allSettled([request(ctx.store, 'retry', { fail: true }), request(ctx.store, 'retry')]);
    expect(failed.status).toBe('rejected');
    expect(second).toMatchObject({ status: 'fulfilled', value: { replayed: false } });
    expect(await ctx.store.messages.count()).toBe(1);
  });

  it('replays the record to a later request with another body, which the caller then refuses by its fingerprint', async () => {
    await request(ctx.store, 'fp', { fingerprint: 'first-body' });
    const later = await request(ctx.store, 'fp', { fingerprint: 'other-body' });
    expect(later).toMatchObject({ replayed: true, record: { fingerprint: 'first-body' } });
  });

  it('sweeps expired records, and only those', async () => {
    const nowMs = Date.now();
    await ctx.store.messages.commit({ messages: [accepted()], idempotency: { accountId: ACCOUNT, key: 'old', record: { ...idempotencyRecord(nowMs), expiresAtMs: nowMs + 10 } } });
    await ctx.store.messages.commit({ messages: [accepted()], idempotency: { accountId: ACCOUNT, key: 'live', record: idempotencyRecord(nowMs) } });
    expect(await ctx.store.idempotency.sweep(nowMs + 11)).toBe(1);
    expect(await ctx.store.idempotency.get({ accountId: ACCOUNT, key: 'old', nowMs })).toBeUndefined();
    expect(await ctx.store.idempotency.get({ accountId: ACCOUNT, key: 'live', nowMs })).toBeDefined();
    expect(await ctx.store.idempotency.sweep(nowMs + 11)).toBe(0);
  });

  it('lets a commit replace an expired record of its key', async () => {
    const nowMs = Date.now();
    await ctx.store.messages.commit({ messages: [accepted()], idempotency: { ...key, record: { ...idempotencyRecord(nowMs - 2000), expiresAtMs: nowMs - 1000 } } });
    const record = idempotencyRecord(nowMs);
    await ctx.store.messages.commit({ messages: [accepted()], idempotency: { ...key, record } });
    expect(await ctx.store.idempotency.get({ ...key, nowMs })).toEqual(record);
  });
});
