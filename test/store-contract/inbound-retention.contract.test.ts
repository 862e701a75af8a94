/**
 * Retention of received messages (issue 33; RetentionPort.sweepBatch), run against every engine:
 * posted and failed messages received before the cutoff go with their raw bytes and list entries,
 * oldest first and at most `batch` per commit; a message still `received` (due for a POST, claimed,
 * or requeued by a retry) stays whatever its age, and goes by a later sweep once it has ended.
 */
import { expect, it } from 'vitest';
import type { InboundAttemptEnd } from '../../src/domain/inbound-message.js';
import type { StorePort } from '../../src/store/port/index.js';
import { eachEngine } from './engines.js';

const T0 = Date.parse('2026-03-01T10:00:00.000Z');
const DAY = 86_400_000;
const CUTOFF = T0 + 30 * DAY;

async function receive(store: StorePort, atMs: number): Promise<string> {
  const [m] = await store.inboundMessages.commit({
    receivedAt: new Date(atMs),
    raw: Buffer.from(`Subject: at ${atMs}\r\n\r\nhi\r\n`),
    messages: [{ routeId: 'route-1', accountId: 'account-1', channelId: 'channel-1', envelope: { mailFrom: 'a@example.org', rcptTo: ['support@acme-shop.com'] }, clientAddress: '192.0.2.7', helo: 'mx.example.org', mailboxHash: null, from: 'a@example.org', subject: 'x' }],
  });
  return m.id;
}

/** Claims the message (due at nowMs) and ends its attempt as `end` says. */
async function attempt(store: StorePort, id: string, nowMs: number, end: InboundAttemptEnd): Promise<void> {
  const { claims } = await store.inboundMessages.claimDue({ owner: 'node-1', nowMs, max: 100, leaseMs: 60_000 });
  const c = claims.find((x) => x.message.id === id)!;
  expect(await store.inboundMessages.recordAttempt({ id, lease: c.lease, attempt: { at: new Date(nowMs).toISOString(), statusCode: 200, error: null }, end })).toBe('recorded');
}

async function sweepAll(store: StorePort, batch: number): Promise<number[]> {
  const counts: number[] = [];
  for (;;) {
    const r = await store.retention.sweepBatch({ cutoffMs: CUTOFF, batch });
    counts.push(r.inboundMessages);
    if (!r.more) return counts;
  }
}

const listed = async (store: StorePort) => (await store.inboundMessages.list({ accountId: 'account-1', limit: 100 })).results.map((m) => m.id).sort();

eachEngine('inbound messages under retention', (ctx) => {
  it('removes posted and failed messages older than the cutoff with their raw bytes, batch by batch, oldest first', async () => {
    const posted = await receive(ctx.store, T0);
    const failed = await receive(ctx.store, T0 + 1);
    const recent = await receive(ctx.store, CUTOFF + 1000);
    await attempt(ctx.store, posted, T0, { kind: 'posted' });
    await attempt(ctx.store, failed, T0 + 1, { kind: 'failed' });
    await attempt(ctx.store, recent, CUTOFF + 1000, { kind: 'posted' });
    const first = await ctx.store.retention.sweepBatch({ cutoffMs: CUTOFF, batch: 1 });
    expect(first).toMatchObject({ inboundMessages: 1, more: true });
    expect(await ctx.store.inboundMessages.get(posted)).toBeUndefined();
    expect(await ctx.store.inboundMessages.raw(posted)).toBeUndefined();
    expect((await ctx.store.inboundMessages.get(failed))?.status).toBe('failed');
    expect(await sweepAll(ctx.store, 1)).toEqual([1, 0]);
    expect(await ctx.store.inboundMessages.raw(failed)).toBeUndefined();
    expect(await listed(ctx.store)).toEqual([recent]);
    expect(await ctx.store.inboundMessages.raw(recent)).toBeDefined();
  });

  it('never removes a message still received, due, claimed or requeued, and removes it once it has ended', async () => {
    const due = await receive(ctx.store, T0);
    const retrying = await receive(ctx.store, T0 + 1);
    const requeued = await receive(ctx.store, T0 + 2);
    await attempt(ctx.store, retrying, T0 + 1, { kind: 'retry', atMs: CUTOFF + DAY });
    await attempt(ctx.store, requeued, T0 + 2, { kind: 'failed' });
    await ctx.store.inboundMessages.requeue(requeued, CUTOFF + DAY);
    expect(await sweepAll(ctx.store, 10)).toEqual([0]);
    expect(await listed(ctx.store)).toEqual([due, retrying, requeued].sort());
    for (const id of [due, retrying, requeued]) expect(await ctx.store.inboundMessages.raw(id)).toBeDefined();
    await attempt(ctx.store, due, CUTOFF + DAY, { kind: 'failed' });
    expect(await sweepAll(ctx.store, 10)).toEqual([1]);
    expect(await listed(ctx.store)).toEqual([retrying, requeued].sort());
    expect(await ctx.store.inboundMessages.raw(due)).toBeUndefined();
  });
});
