/**
 * Received messages counted per day (issue 33; InboundMessagesPort.receivedPerDay), run against
 * every engine: every routed copy counts on its UTC day, per account and channel, zeros included,
 * and the counts stay when retention removes the messages.
 */
import { expect, it } from 'vitest';
import { utcDay } from '../../src/domain/stat-counters.js';
import type { StorePort } from '../../src/store/port/index.js';
import { eachEngine } from './engines.js';

const T0 = Date.parse('2026-03-01T23:59:59.000Z');
const DAY0 = utcDay(T0);

async function receive(store: StorePort, atMs: number, copies: { accountId?: string; channelId?: string }[]) {
  return store.inboundMessages.commit({
    receivedAt: new Date(atMs),
    raw: Buffer.from('Subject: x\r\n\r\nhi\r\n'),
    messages: copies.map((o, i) => ({ routeId: `route-${i}`, accountId: 'account-1', channelId: 'channel-1', envelope: { mailFrom: 'a@example.org', rcptTo: ['support@acme-shop.com'] }, clientAddress: '192.0.2.7', helo: 'mx.example.org', mailboxHash: null, from: null, subject: null, ...o })),
  });
}

const counts = async (store: StorePort, channelIds?: string[]) =>
  (await store.inboundMessages.receivedPerDay({ accountId: 'account-1', channelIds, fromDay: DAY0 - 1, toDay: DAY0 + 2 })).map((d) => [d.day - DAY0, d.received]);

eachEngine('received messages per day', (ctx) => {
  it('counts every routed copy on its UTC day, per channel, zeros included', async () => {
    await receive(ctx.store, T0, [{}, { channelId: 'channel-2' }]);
    await receive(ctx.store, T0 + 1000, [{}]);
    await receive(ctx.store, T0 + 1000, [{ accountId: 'account-2' }]);
    await receive(ctx.store, T0 + 2 * 86_400_000, [{ channelId: 'channel-2' }]);
    expect(await counts(ctx.store)).toEqual([[-1, 0], [0, 2], [1, 1], [2, 1]]);
    expect(await counts(ctx.store, ['channel-2'])).toEqual([[-1, 0], [0, 1], [1, 0], [2, 1]]);
    expect(await counts(ctx.store, [])).toEqual([[-1, 0], [0, 0], [1, 0], [2, 0]]);
  });

  it('keeps the counts when retention removes the messages', async () => {
    const [m] = await receive(ctx.store, T0, [{}]);
    const [{ lease }] = (await ctx.store.inboundMessages.claimDue({ owner: 'node-1', nowMs: T0, max: 1, leaseMs: 60_000 })).claims;
    await ctx.store.inboundMessages.recordAttempt({ id: m.id, lease, attempt: { at: new Date(T0).toISOString(), statusCode: 200, error: null }, end: { kind: 'posted' } });
    expect((await ctx.store.retention.sweepBatch({ cutoffMs: T0 + 86_400_000, batch: 10 })).inboundMessages).toBe(1);
    expect(await ctx.store.inboundMessages.get(m.id)).toBeUndefined();
    expect(await counts(ctx.store)).toEqual([[-1, 0], [0, 1], [1, 0], [2, 0]]);
  });
});
