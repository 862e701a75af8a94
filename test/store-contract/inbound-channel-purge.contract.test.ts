/**
 * A deleted channel's received messages (issue 33), run against every engine: from the delete's
 * commit on they are left out of the account's list and day counts, a copy committed for the
 * channel afterwards (its RCPT came before the delete) is left out, and the purge removes them
 * with their raw bytes and counts in bounded batches while the account's other channels keep
 * theirs.
 */
import { expect, it } from 'vitest';
import { utcDay } from '../../src/domain/stat-counters.js';
import type { StorePort } from '../../src/store/port/index.js';
import { eachEngine } from './engines.js';

const T0 = Date.parse('2026-03-01T10:00:00.000Z');
const DAY0 = utcDay(T0);

async function setup(store: StorePort) {
  const accountId = (await store.accounts.create({ name: 'a', state: 'active' })).id;
  const channel = () => store.channels.create({ accountId, name: 'c', deliveryType: 'live', tracking: { links: false, opens: false }, maxPerAccount: 10 });
  return { accountId, gone: (await channel()).id, kept: (await channel()).id };
}

function receive(store: StorePort, accountId: string, channelIds: string[], atMs = T0) {
  return store.inboundMessages.commit({
    receivedAt: new Date(atMs),
    raw: Buffer.from('Subject: x\r\n\r\nhi\r\n'),
    messages: channelIds.map((channelId, i) => ({
      routeId: `route-${i}`,
      accountId,
      channelId,
      envelope: { mailFrom: 'a@example.org', rcptTo: ['support@acme-shop.com'] },
      clientAddress: '192.0.2.7',
      helo: 'mx.example.org',
      mailboxHash: null,
      from: null,
      subject: null,
    })),
  });
}

const listed = async (store: StorePort, accountId: string) => (await store.inboundMessages.list({ accountId, limit: 100 })).results.map((m) => m.channelId).sort();
const counted = async (store: StorePort, accountId: string) => (await store.inboundMessages.receivedPerDay({ accountId, fromDay: DAY0, toDay: DAY0 + 1 })).map((d) => d.received);

eachEngine('a deleted channel’s received messages', (ctx) => {
  it('are hidden from the delete on, purged in bounded batches with their counts, the other channel’s kept', async () => {
    const { accountId, gone, kept } = await setup(ctx.store);
    for (let i = 0; i < 3; i++) await receive(ctx.store, accountId, [gone, kept], T0 + i * 86_400_000 * (i % 2));
    const [keptMessage] = (await ctx.store.inboundMessages.list({ accountId, channelIds: [kept], limit: 1 })).results;
    expect(await counted(ctx.store, accountId)).toEqual([4, 2]);
    expect(await ctx.store.channels.delete(gone)).toBe(true);
    expect(await listed(ctx.store, accountId)).toEqual([kept, kept, kept]);
    expect(await counted(ctx.store, accountId)).toEqual([2, 1]);
    expect(await ctx.store.channels.remains(gone)).toMatchObject({ inboundMessages: 3, inboundCounts: 2 });
    let batches = 0;
    for (let r = await ctx.store.channels.purgeBatch(gone, 2); !r.done; r = await ctx.store.channels.purgeBatch(gone, 2)) {
      expect(r.removed).toBeLessThanOrEqual(2);
      expect(++batches).toBeLessThan(200);
    }
    expect(await ctx.store.channels.remains(gone)).toMatchObject({ inboundMessages: 0, inboundCounts: 0 });
    expect(await listed(ctx.store, accountId)).toEqual([kept, kept, kept]);
    expect(await counted(ctx.store, accountId)).toEqual([2, 1]);
    expect(await ctx.store.inboundMessages.raw(keptMessage.id)).toBeDefined();
  });

  it('leaves out a copy committed for the channel after its delete, and keeps the other route’s copy', async () => {
    const { accountId, gone, kept } = await setup(ctx.store);
    await ctx.store.channels.delete(gone);
    const made = await receive(ctx.store, accountId, [gone, kept]);
    expect(made.map((m) => m.channelId)).toEqual([kept]);
    expect(await ctx.store.channels.remains(gone)).toMatchObject({ inboundMessages: 0, inboundCounts: 0 });
    expect(await receive(ctx.store, accountId, [gone])).toEqual([]);
  });
});
