/**
 * InboundMessagesPort (store/port/inbound-messages.ts), run against every engine: received
 * messages committed with their raw bytes, read, listed (filters, cursor paging newest first),
 * claimed under leases (due order, restart after a lost claim, a node giving its own claims back
 * at its start, concurrent claimers), their verdicts and POST attempts recorded (posted, retry,
 * failed; stale leases change nothing), and requeued.
 */
import { expect, it } from 'vitest';
import type { AuthVerdicts } from '../../src/domain/auth-verdicts.js';
import type { NewInboundMessage } from '../../src/domain/inbound-message.js';
import type { StorePort } from '../../src/store/port/index.js';
import { eachEngine } from './engines.js';
import { turnsDuring } from '../support/turns.js';

const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';
const T0 = Date.parse('2026-03-01T10:00:00.000Z');

function copy(o: Partial<NewInboundMessage> = {}): NewInboundMessage {
  return {
    routeId: 'route-1',
    accountId: 'account-1',
    channelId: 'channel-1',
    envelope: { mailFrom: 'alice@example.org', rcptTo: ['support@acme-shop.com'] },
    clientAddress: '192.0.2.7',
    helo: 'mx.example.org',
    mailboxHash: null,
    from: 'alice@example.org',
    subject: 'Order 4711',
    ...o,
  };
}

async function receive(store: StorePort, atMs: number, o: Partial<NewInboundMessage> = {}, raw = 'Subject: x\r\n\r\nhi\r\n') {
  const [m] = await store.inboundMessages.commit({ receivedAt: new Date(atMs), raw: Buffer.from(raw), messages: [copy(o)] });
  return m;
}

const VERDICTS: AuthVerdicts = { spf: { result: 'pass', domain: 'example.org' }, dkim: [], dmarc: { result: 'none', domain: null, policy: null }, arc: { result: 'none' } };

const attempt = (statusCode: number | null, error: string | null = null) => ({ at: new Date(T0).toISOString(), statusCode, error });

eachEngine('inbound messages', (ctx) => {
  it('commits every routed copy with the raw bytes, received and due at once', async () => {
    const raw = Buffer.from('From: a@example.org\r\nSubject: \xe9t\xe9\r\n\r\n\x00\xff body\r\n', 'latin1');
    const made = await ctx.store.inboundMessages.commit({ receivedAt: new Date(T0), raw, messages: [copy(), copy({ routeId: 'route-2', mailboxHash: '4711' })] });
    expect(made).toHaveLength(2);
    expect(made[0]).toEqual({
      id: expect.any(String),
      ...copy(),
      receivedAt: new Date(T0).toISOString(),
      size: raw.length,
      status: 'received',
      attempts: [],
      nextAttemptAt: new Date(T0).toISOString(),
      processedAt: null,
      auth: null,
    });
    expect(await ctx.store.inboundMessages.get(made[1].id)).toEqual(made[1]);
    expect(Buffer.compare((await ctx.store.inboundMessages.raw(made[1].id))!, raw)).toBe(0);
  });

  it('reads a message over 16 MiB back as a Buffer of its own (a 25 MB attachment in base64)', async () => {
    const raw = Buffer.alloc(17 * 1024 * 1024, 'x');
    raw.write('Subject: big\r\n\r\n');
    const [m] = await ctx.store.inboundMessages.commit({ receivedAt: new Date(T0), raw, messages: [copy()] });
    const read = (await ctx.store.inboundMessages.raw(m.id))!;
    expect(Buffer.isBuffer(read)).toBe(true);
    expect(read.equals(raw)).toBe(true);
    // Its own memory on every read: the poster hands it to a worker thread (transfers it).
    expect((await ctx.store.inboundMessages.raw(m.id))!.buffer).not.toBe(read.buffer);
  });

  it('reads a large message back a part per event-loop turn, so no turn holds the thread for all of it', async () => {
    const raw = Buffer.alloc(6 * 1024 * 1024);
    for (let i = 0; i < raw.length; i += 4) raw.writeUInt32LE((i * 2654435761) >>> 0, i);
    const [m] = await ctx.store.inboundMessages.commit({ receivedAt: new Date(T0), raw, messages: [copy()] });
    const { value: read, turns } = await turnsDuring(() => ctx.store.inboundMessages.raw(m.id));
    expect(read!.equals(raw)).toBe(true);
    // 1 MiB parts on both engines: at least one turn between each two of the six.
    expect(turns).toBeGreaterThanOrEqual(5);
  });

  it('answers not found for an unknown message in every verb', async () => {
    expect(await ctx.store.inboundMessages.get(UNKNOWN_ID)).toBeUndefined();
    expect(await ctx.store.inboundMessages.raw(UNKNOWN_ID)).toBeUndefined();
    expect(await ctx.store.inboundMessages.markProcessed(UNKNOWN_ID, 1, VERDICTS)).toBe('stale');
    expect(await ctx.store.inboundMessages.recordAttempt({ id: UNKNOWN_ID, lease: 1, attempt: attempt(200), end: { kind: 'posted' } })).toBe('stale');
    expect(await ctx.store.inboundMessages.requeue(UNKNOWN_ID, T0)).toBeUndefined();
  });

  it("lists an account's messages newest first, page by page with the cursor", async () => {
    const ids = [];
    for (let i = 0; i < 5; i++) ids.push((await receive(ctx.store, T0 + i * 1000)).id);
    await receive(ctx.store, T0, { accountId: 'account-2' });
    const seen: string[] = [];
    let after;
    for (let page = 0; page < 4; page++) {
      const r = await ctx.store.inboundMessages.list({ accountId: 'account-1', limit: 2, after });
      seen.push(...r.results.map((m) => m.id));
      if (!r.next) break;
      after = r.next;
    }
    expect(seen).toEqual([...ids].reverse());
  });

  it('filters by route, channel, status, a part of From or Subject, and a date range', async () => {
    const a = await receive(ctx.store, T0, { routeId: 'r-a', from: 'alice@example.org', subject: 'Invoice March' });
    const b = await receive(ctx.store, T0 + 1000, { channelId: 'channel-2', from: 'bob@example.net', subject: 'Re: order' });
    const c = await receive(ctx.store, T0 + 2000, { from: null, subject: null });
    const { claims } = await ctx.store.inboundMessages.claimDue({ owner: 'node-1', nowMs: T0 + 5000, max: 10, leaseMs: 60_000 });
    const cl = claims.find((x) => x.message.id === c.id)!;
    await ctx.store.inboundMessages.recordAttempt({ id: c.id, lease: cl.lease, attempt: attempt(200), end: { kind: 'posted' } });
    const ids = async (f: object) => (await ctx.store.inboundMessages.list({ accountId: 'account-1', limit: 10, ...f })).results.map((m) => m.id);
    expect(await ids({ routeId: 'r-a' })).toEqual([a.id]);
    expect(await ids({ channelIds: ['channel-2'] })).toEqual([b.id]);
    expect(await ids({ status: 'posted' })).toEqual([c.id]);
    expect(await ids({ status: 'received' })).toEqual([b.id, a.id]);
    expect(await ids({ from: 'BOB@' })).toEqual([b.id]);
    expect(await ids({ subject: 'invoice' })).toEqual([a.id]);
    expect(await ids({ subject: '%' })).toEqual([]);
    expect(await ids({ startMs: T0 + 1000, endMs: T0 + 2000 })).toEqual([b.id]);
    expect(await ids({ startMs: T0 + 1000 })).toEqual([c.id, b.id]);
    expect(await ids({ endMs: T0 + 1000 })).toEqual([a.id]);
  });

  it('claims due messages oldest first under a lease, and gives a claim nobody finished out again after it', async () => {
    const first = await receive(ctx.store, T0);
    const second = await receive(ctx.store, T0 + 1000);
    const one = await ctx.store.inboundMessages.claimDue({ owner: 'node-1', nowMs: T0 + 1000, max: 1, leaseMs: 60_000 });
    expect(one.claims.map((c) => [c.message.id, c.lease])).toEqual([[first.id, 1]]);
    expect(one.nextDueMs).toBe(T0 + 1000);
    const rest = await ctx.store.inboundMessages.claimDue({ owner: 'node-1', nowMs: T0 + 1000, max: 10, leaseMs: 60_000 });
    expect(rest.claims.map((c) => c.message.id)).toEqual([second.id]);
    expect(rest.nextDueMs).toBe(T0 + 61_000);
    expect((await ctx.store.inboundMessages.claimDue({ owner: 'node-1', nowMs: T0 + 30_000, max: 10, leaseMs: 60_000 })).claims).toEqual([]);
    // The claimer crashed: after the lease the message is due again, under a new lease; the old one is stale.
    const again = await ctx.store.inboundMessages.claimDue({ owner: 'node-1', nowMs: T0 + 61_000, max: 10, leaseMs: 60_000 });
    // Both are due at the same time now: the order between them is the id's.
    const byId = (x: [string, number], y: [string, number]) => (x[0] < y[0] ? -1 : 1);
    expect(again.claims.map((c): [string, number] => [c.message.id, c.lease]).sort(byId)).toEqual(([[first.id, 2], [second.id, 2]] as [string, number][]).sort(byId));
    expect(await ctx.store.inboundMessages.recordAttempt({ id: first.id, lease: 1, attempt: attempt(200), end: { kind: 'posted' } })).toBe('stale');
    expect((await ctx.store.inboundMessages.get(first.id))?.status).toBe('received');
  });

  it('keeps the claim across a restart of the store', async () => {
    const m = await receive(ctx.store, T0);
    const store = await ctx.reopen();
    const { claims } = await store.inboundMessages.claimDue({ owner: 'node-1', nowMs: T0, max: 10, leaseMs: 1000 });
    expect(claims.map((c) => c.message.id)).toEqual([m.id]);
  });

  it("gives back at once the claims a node held when it starts again, not another node's, and the old claim's writes are stale", async () => {
    const mine = await receive(ctx.store, T0);
    const finished = await receive(ctx.store, T0 + 1);
    const theirs = await receive(ctx.store, T0 + 2);
    const waiting = await receive(ctx.store, T0 + 3);
    const [a, b] = (await ctx.store.inboundMessages.claimDue({ owner: 'node-1', nowMs: T0 + 10, max: 2, leaseMs: 300_000 })).claims;
    const [c] = (await ctx.store.inboundMessages.claimDue({ owner: 'node-2', nowMs: T0 + 10, max: 1, leaseMs: 300_000 })).claims;
    const [d] = (await ctx.store.inboundMessages.claimDue({ owner: 'node-1', nowMs: T0 + 10, max: 1, leaseMs: 300_000 })).claims;
    expect([a, b, c, d].map((x) => x.message.id)).toEqual([mine.id, finished.id, theirs.id, waiting.id]);
    // The verdicts alone keep the claim; an attempt ends it, posted or to be retried.
    expect(await ctx.store.inboundMessages.markProcessed(mine.id, a.lease, VERDICTS)).toBe('recorded');
    await ctx.store.inboundMessages.recordAttempt({ id: finished.id, lease: b.lease, attempt: attempt(200), end: { kind: 'posted' } });
    await ctx.store.inboundMessages.recordAttempt({ id: waiting.id, lease: d.lease, attempt: attempt(500, 'HTTP 500'), end: { kind: 'retry', atMs: T0 + 3_600_000 } });

    // node-1 starts again (the store too) a minute later, long before the 5-minute lease ends.
    const store = await ctx.reopen();
    expect(await store.inboundMessages.releaseClaims({ owner: 'node-1', nowMs: T0 + 60_000 })).toBe(1);
    expect(await store.inboundMessages.get(mine.id)).toMatchObject({ status: 'received', nextAttemptAt: new Date(T0 + 60_000).toISOString(), processedAt: expect.any(String) });
    expect(await store.inboundMessages.get(finished.id)).toMatchObject({ status: 'posted', nextAttemptAt: null });
    expect(await store.inboundMessages.get(waiting.id)).toMatchObject({ nextAttemptAt: new Date(T0 + 3_600_000).toISOString() });
    expect(await store.inboundMessages.get(theirs.id)).toMatchObject({ nextAttemptAt: new Date(T0 + 10 + 300_000).toISOString() });
    // A late writer of the old claim changes nothing.
    expect(await store.inboundMessages.recordAttempt({ id: mine.id, lease: a.lease, attempt: attempt(200), end: { kind: 'posted' } })).toBe('stale');
    const again = await store.inboundMessages.claimDue({ owner: 'node-1', nowMs: T0 + 60_000, max: 10, leaseMs: 300_000 });
    expect(again.claims.map((x) => [x.message.id, x.lease])).toEqual([[mine.id, a.lease + 2]]);
    expect(again.nextDueMs).toBe(T0 + 10 + 300_000);
    expect(await store.inboundMessages.releaseClaims({ owner: 'node-3', nowMs: T0 + 60_000 })).toBe(0);
    // Its claim ended by an attempt, the message is no claim of the node's to give back.
    await store.inboundMessages.recordAttempt({ id: mine.id, lease: again.claims[0].lease, attempt: attempt(204), end: { kind: 'posted' } });
    expect(await store.inboundMessages.releaseClaims({ owner: 'node-1', nowMs: T0 + 61_000 })).toBe(0);
    expect(await store.inboundMessages.get(mine.id)).toMatchObject({ status: 'posted', nextAttemptAt: null });
  });

  it('records the verdicts, then attempts: a retry stays received and due later, a 2xx ends posted', async () => {
    const m = await receive(ctx.store, T0);
    const [{ lease }] = (await ctx.store.inboundMessages.claimDue({ owner: 'node-1', nowMs: T0, max: 1, leaseMs: 60_000 })).claims;
    expect(await ctx.store.inboundMessages.markProcessed(m.id, lease, VERDICTS)).toBe('recorded');
    expect(await ctx.store.inboundMessages.recordAttempt({ id: m.id, lease, attempt: attempt(500, 'HTTP 500'), end: { kind: 'retry', atMs: T0 + 30_000 } })).toBe('recorded');
    const waiting = await ctx.store.inboundMessages.get(m.id);
    expect(waiting).toMatchObject({ status: 'received', auth: { spf: { result: 'pass' } }, nextAttemptAt: new Date(T0 + 30_000).toISOString(), attempts: [attempt(500, 'HTTP 500')] });
    expect(waiting?.processedAt).toEqual(expect.any(String));
    expect((await ctx.store.inboundMessages.claimDue({ owner: 'node-1', nowMs: T0 + 29_999, max: 1, leaseMs: 60_000 })).claims).toEqual([]);
    const [next] = (await ctx.store.inboundMessages.claimDue({ owner: 'node-1', nowMs: T0 + 30_000, max: 1, leaseMs: 60_000 })).claims;
    expect(await ctx.store.inboundMessages.recordAttempt({ id: m.id, lease: next.lease, attempt: attempt(204), end: { kind: 'posted' } })).toBe('recorded');
    expect(await ctx.store.inboundMessages.get(m.id)).toMatchObject({ status: 'posted', nextAttemptAt: null, attempts: [attempt(500, 'HTTP 500'), attempt(204)] });
    expect((await ctx.store.inboundMessages.claimDue({ owner: 'node-1', nowMs: T0 + 10 ** 9, max: 10, leaseMs: 1 })).nextDueMs).toBeUndefined();
  });

  it('ends failed when given up, and a requeue makes it due again under a new lease', async () => {
    const m = await receive(ctx.store, T0);
    const [{ lease }] = (await ctx.store.inboundMessages.claimDue({ owner: 'node-1', nowMs: T0, max: 1, leaseMs: 60_000 })).claims;
    await ctx.store.inboundMessages.recordAttempt({ id: m.id, lease, attempt: attempt(null, 'timed out'), end: { kind: 'failed' } });
    expect(await ctx.store.inboundMessages.get(m.id)).toMatchObject({ status: 'failed', nextAttemptAt: null });
    expect(await ctx.store.inboundMessages.recordAttempt({ id: m.id, lease, attempt: attempt(200), end: { kind: 'posted' } })).toBe('stale');
    const back = await ctx.store.inboundMessages.requeue(m.id, T0 + 5000);
    expect(back).toMatchObject({ status: 'received', nextAttemptAt: new Date(T0 + 5000).toISOString(), attempts: [attempt(null, 'timed out')] });
    const [c] = (await ctx.store.inboundMessages.claimDue({ owner: 'node-1', nowMs: T0 + 5000, max: 1, leaseMs: 60_000 })).claims;
    expect(c.lease).toBe(lease + 2);
  });

  it('never hands one message to two concurrent claimers', async () => {
    for (let i = 0; i < 20; i++) await receive(ctx.store, T0 + i);
    const rounds = await Promise.all([0, 1, 2, 3].map(() => ctx.store.inboundMessages.claimDue({ owner: 'node-1', nowMs: T0 + 100, max: 8, leaseMs: 60_000 })));
    const ids = rounds.flatMap((r) => r.claims.map((c) => c.message.id));
    expect(ids).toHaveLength(20);
    expect(new Set(ids).size).toBe(20);
  });
});
