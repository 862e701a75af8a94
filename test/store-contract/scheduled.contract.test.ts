/**
 * Scheduled sends (store/port/schedule.ts): a scheduled message's jobs are due at its time; a
 * message no attempt touched is canceled once, with one `canceled` event and no bounce; a
 * leased job makes the cancel a conflict, and a cancel raced with a lease ends one way only;
 * a scheduled message moves to another time with its jobs.
 */
import { expect, it } from 'vitest';
import { ACCOUNT, accepted } from './submissions.js';
import { eachEngine } from './engines.js';

const T0 = Date.UTC(2026, 11, 1, 8, 0, 0);
const HOUR = 3_600_000;
const LEASE_MS = 60_000;
const iso = (ms: number) => new Date(ms).toISOString();

eachEngine('scheduled sends', (ctx) => {
  async function commitScheduled(at: number, to = ['ann@example.org', 'bob@example.net']) {
    const m = accepted({ to, scheduledAt: iso(at), createdAt: iso(T0) });
    await ctx.store.messages.commit({ messages: [m], now: new Date(T0) });
    return m.record.id;
  }

  it('makes a scheduled message due at its time, not at the commit', async () => {
    const id = await commitScheduled(T0 + HOUR);
    expect((await ctx.store.queue.jobsOfMessage(id)).map((j) => j.dueAt)).toEqual([iso(T0 + HOUR), iso(T0 + HOUR)]);
    expect((await ctx.store.queue.lease({ owner: 'n', nowMs: T0 + HOUR - 1, max: 10, leaseMs: LEASE_MS })).jobs).toEqual([]);
    expect(await ctx.store.queue.nextDueAfter(T0)).toBe(T0 + HOUR);
    expect((await ctx.store.queue.lease({ owner: 'n', nowMs: T0 + HOUR, max: 10, leaseMs: LEASE_MS })).jobs).toHaveLength(2);
  });

  it('cancels a scheduled message: jobs done, record canceled and sent, one canceled event, nothing left to lease', async () => {
    const id = await commitScheduled(T0 + HOUR);
    const r = await ctx.store.messages.cancelMessage(id, new Date(T0 + 5_000));
    expect(r).toMatchObject({ status: 'done', record: { status: 'sent', openJobs: 0, canceledAt: iso(T0 + 5_000) } });
    expect(await ctx.store.messages.get(id)).toMatchObject({ status: 'sent', openJobs: 0, canceledAt: iso(T0 + 5_000), finishedAt: iso(T0 + 5_000) });
    expect((await ctx.store.queue.jobsOfMessage(id)).map((j) => [j.state, j.canceledAt])).toEqual([['done', iso(T0 + 5_000)], ['done', iso(T0 + 5_000)]]);
    const events = await ctx.store.events.ofMessage(id);
    expect(events.map((e) => e.eventType)).toEqual(['accepted', 'processed', 'canceled']);
    expect(events[2].recipients.sort()).toEqual(['ann@example.org', 'bob@example.net']);
    expect(events.some((e) => e.eventType === 'bounced')).toBe(false);
    expect((await ctx.store.queue.lease({ owner: 'n', nowMs: T0 + 2 * HOUR, max: 10, leaseMs: LEASE_MS })).jobs).toEqual([]);
    expect(await ctx.store.messages.cancelMessage(id, new Date(T0 + 6_000))).toEqual({ status: 'conflict', reason: 'ended' });
    expect(await ctx.store.messages.cancelMessage('no-such-id', new Date(T0))).toEqual({ status: 'not_found' });
  });

  it('cancels a queued message never attempted, and refuses once a job is leased for an attempt', async () => {
    const m = accepted({ to: ['cy@example.org'], createdAt: iso(T0) });
    await ctx.store.messages.commit({ messages: [m], now: new Date(T0) });
    const leased = await ctx.store.queue.lease({ owner: 'n', nowMs: T0, max: 10, leaseMs: LEASE_MS });
    expect(leased.jobs).toHaveLength(1);
    expect(await ctx.store.messages.cancelMessage(m.record.id, new Date(T0 + 1))).toEqual({ status: 'conflict', reason: 'attempted' });
    expect(await ctx.store.messages.get(m.record.id)).toMatchObject({ status: 'queued' });
    const other = accepted({ to: ['dee@example.org'], createdAt: iso(T0) });
    await ctx.store.messages.commit({ messages: [other], now: new Date(T0) });
    expect(await ctx.store.messages.cancelMessage(other.record.id, new Date(T0 + 1))).toMatchObject({ status: 'done' });
  });

  it('ends a cancel raced with a lease one way only: canceled and not leased, or leased and not canceled', async () => {
    const ids = await Promise.all(Array.from({ length: 10 }, () => commitScheduled(T0 + HOUR, ['eve@example.org'])));
    const [lease, ...cancels] = await Promise.all([
      ctx.store.queue.lease({ owner: 'n', nowMs: T0 + HOUR, max: 100, leaseMs: LEASE_MS }),
      ...ids.map((id) => ctx.store.messages.cancelMessage(id, new Date(T0 + HOUR))),
    ]);
    const leasedIds = new Set(lease.jobs.map((j) => j.messageId));
    ids.forEach((id, i) => {
      expect(cancels[i].status === 'done', id).toBe(!leasedIds.has(id));
      if (leasedIds.has(id)) expect(cancels[i]).toEqual({ status: 'conflict', reason: 'attempted' });
    });
  });

  it('moves a scheduled message with its jobs, and refuses once its time has come or it is not scheduled', async () => {
    const id = await commitScheduled(T0 + HOUR);
    const r = await ctx.store.messages.rescheduleMessage({ id, scheduledAt: iso(T0 + 3 * HOUR), nowMs: T0 + 1_000 });
    expect(r).toMatchObject({ status: 'done', record: { scheduledAt: iso(T0 + 3 * HOUR) } });
    expect(await ctx.store.messages.get(id)).toMatchObject({ scheduledAt: iso(T0 + 3 * HOUR), status: 'queued' });
    expect((await ctx.store.queue.jobsOfMessage(id)).map((j) => j.dueAt)).toEqual([iso(T0 + 3 * HOUR), iso(T0 + 3 * HOUR)]);
    expect((await ctx.store.queue.lease({ owner: 'n', nowMs: T0 + 2 * HOUR, max: 10, leaseMs: LEASE_MS })).jobs).toEqual([]);
    expect(await ctx.store.queue.nextDueAfter(T0 + 2 * HOUR)).toBe(T0 + 3 * HOUR);
    // Earlier again: due sooner.
    await ctx.store.messages.rescheduleMessage({ id, scheduledAt: iso(T0 + 2 * HOUR + 5), nowMs: T0 + 2 * HOUR });
    expect((await ctx.store.queue.lease({ owner: 'n', nowMs: T0 + 2 * HOUR + 5, max: 10, leaseMs: LEASE_MS })).jobs).toHaveLength(2);
    expect(await ctx.store.messages.rescheduleMessage({ id, scheduledAt: iso(T0 + 4 * HOUR), nowMs: T0 + 2 * HOUR + 6 })).toEqual({ status: 'conflict', reason: 'attempted' });
    const plain = accepted({ createdAt: iso(T0) });
    await ctx.store.messages.commit({ messages: [plain], now: new Date(T0) });
    expect(await ctx.store.messages.rescheduleMessage({ id: plain.record.id, scheduledAt: iso(T0 + HOUR), nowMs: T0 })).toEqual({ status: 'conflict', reason: 'not_scheduled' });
  });

  it('moves a scheduled message not yet finished: its jobs become due at the new time once it is', async () => {
    const m = accepted({ to: ['fay@example.org'], compose: { template: 'request' }, scheduledAt: iso(T0 + HOUR), createdAt: iso(T0) });
    await ctx.store.messages.commit({ messages: [m], now: new Date(T0) });
    await ctx.store.messages.rescheduleMessage({ id: m.record.id, scheduledAt: iso(T0 + 2 * HOUR), nowMs: T0 });
    await ctx.store.messages.storeFinished([{ messageId: m.record.id, body: new Uint8Array(Buffer.from('Subject: x\r\n\r\nx\r\n')), composed: true }]);
    expect((await ctx.store.queue.lease({ owner: 'n', nowMs: T0 + HOUR, max: 10, leaseMs: LEASE_MS })).jobs).toEqual([]);
    expect((await ctx.store.queue.lease({ owner: 'n', nowMs: T0 + 2 * HOUR, max: 10, leaseMs: LEASE_MS })).jobs).toHaveLength(1);
  });

  it('hands the canceled event to a webhook that wants it, one entry per recipient, in the cancel\'s write', async () => {
    const { webhook } = await ctx.store.webhooks.create({ accountId: ACCOUNT, channelId: null, url: 'https://hooks.example.org/in', events: ['canceled'], enabled: true, additionalHeaders: [], maxPerAccount: 10 });
    const id = await commitScheduled(T0 + HOUR, ['gil@example.org']);
    await ctx.store.messages.cancelMessage(id, new Date(T0 + 1_000));
    const { claims } = await ctx.store.webhookOutbox.claimDue({ nowMs: Date.now() + 1, max: 100, freeSlots: { default: 100, byWebhook: {} } });
    expect(claims.map((c) => [c.webhook.id, c.entry.payload])).toEqual([[webhook.id, expect.objectContaining({ eventType: 'canceled', messageId: id, recipient: 'gil@example.org' })]]);
  });
});
