/**
 * BroadcastsPort (store/port/broadcasts.ts): accepting a broadcast (with the send quota and the
 * idempotency record in the same write), the reads the expander and the API make, cancel, the
 * failure and suppression pages, the counters and the channel's list. The atomic rules are raced:
 * accepts never pass the quota, a key is stored once, racing cancels cancel once.
 */
import { expect, it } from 'vitest';
import { isAppError } from '../../src/domain/errors.js';
import type { BroadcastRecord } from '../../src/store/port/broadcasts.js';
import { ACCOUNT, accepted, broadcast, entries, idempotencyRecord, outcomes } from './submissions.js';
import { eachEngine } from './engines.js';

const codeOf = (err: unknown): string | undefined => (isAppError(err) ? err.code : undefined);
const page = { limit: 10, offset: 0 };

eachEngine('broadcasts', (ctx) => {
  /** Accepts a broadcast of `total` entries and commits its first `expand` as messages (sandbox: finished at once). */
  async function expanded(total: number, expand: number, o: { sandbox?: boolean; createdAt?: string; subject?: string } = {}): Promise<BroadcastRecord<{ subject: string }>> {
    const b = broadcast({ total, createdAt: o.createdAt, subject: o.subject });
    await ctx.store.broadcasts.accept({ record: b, entries: entries(total) });
    if (expand > 0) {
      const messages = Array.from({ length: expand }, () => accepted({ broadcastId: b.id, sandbox: o.sandbox }));
      await ctx.store.messages.commit({ messages, broadcastProgress: { broadcastId: b.id, from: 0, cursor: expand, skipped: 0, failures: [], suppressed: [] } });
    }
    return b;
  }

  it('stores an accepted broadcast with its entries and hands it to the expander', async () => {
    const b = broadcast({ total: 3 });
    await ctx.store.broadcasts.accept({ record: b, entries: entries(3) });
    expect(await ctx.store.broadcasts.get(b.id)).toEqual(b);
    expect(await ctx.store.broadcasts.nextActive()).toEqual(b);
    expect(await ctx.store.broadcasts.entries(b.id, 1, 10)).toEqual([
      { index: 1, entry: { to: 'r1@example.org' } },
      { index: 2, entry: { to: 'r2@example.org' } },
    ]);
    expect(await ctx.store.broadcasts.view(b.id)).toEqual({ record: b, counters: { finished: 0, canceled: 0, statistics: expect.objectContaining({ sent: 0, delivered: 0 }) } });
  });

  it('knows nothing of an unknown broadcast', async () => {
    expect(await ctx.store.broadcasts.get('no-such-id')).toBeUndefined();
    expect(await ctx.store.broadcasts.view('no-such-id')).toBeUndefined();
    expect(await ctx.store.broadcasts.nextActive()).toBeUndefined();
    expect(await ctx.store.broadcasts.entries('no-such-id', 0, 10)).toEqual([]);
    expect(await ctx.store.broadcasts.cancel('no-such-id', new Date())).toEqual({ status: 'not_found' });
    expect(await ctx.store.broadcasts.failures('no-such-id', page)).toEqual({ totalCount: 0, results: [] });
    expect(await ctx.store.broadcasts.suppressions('no-such-id', page)).toEqual({ totalCount: 0, results: [] });
    expect((await ctx.store.broadcasts.counters('no-such-id')).finished).toBe(0);
  });

  it('hands the oldest broadcast still expanding to the expander first, and keeps them across a restart', async () => {
    const older = await expanded(2, 0, { createdAt: new Date(Date.now() - 1000).toISOString() });
    await expanded(2, 0);
    expect((await ctx.store.broadcasts.nextActive())?.id).toBe(older.id);
    const store = await ctx.reopen();
    expect((await store.broadcasts.nextActive())?.id).toBe(older.id);
  });

  it("takes a pending account's quota for every recipient, and refuses, writing nothing, what would pass it", async () => {
    const sendLimit = { accountId: ACCOUNT, limit: 5, recipients: 4 };
    await ctx.store.broadcasts.accept({ record: broadcast({ total: 4 }), entries: entries(4), sendLimit });
    const over = broadcast({ total: 2 });
    await expect(ctx.store.broadcasts.accept({ record: over, entries: entries(2), sendLimit: { ...sendLimit, recipients: 2 } })).rejects.toMatchObject({ code: 'send_limit_exceeded' });
    expect(await ctx.store.broadcasts.get(over.id)).toBeUndefined();
  });

  it('never lets racing accepts pass the quota', async () => {
    const sendLimit = { accountId: ACCOUNT, limit: 5, recipients: 2 };
    const records = Array.from({ length: 6 }, () => broadcast({ total: 2 }));
    const settled = await Promise.allSettled(records.map((record) => ctx.store.broadcasts.accept({ record, entries: entries(2), sendLimit })));
    const { fulfilled, reasons } = outcomes(settled);
    expect(fulfilled).toBe(2);
    expect(reasons.map(codeOf)).toEqual(Array(4).fill('send_limit_exceeded'));
    const stored = await Promise.all(records.map((r) => ctx.store.broadcasts.get(r.id)));
    expect(stored.filter(Boolean)).toHaveLength(2);
  });

  it('stores the idempotency record with the broadcast, once among racing accepts', async () => {
    const idempotency = { accountId: ACCOUNT, key: 'b-key', record: idempotencyRecord(Date.now()) };
    const records = Array.from({ length: 4 }, () => broadcast({ total: 1 }));
    const settled = await Promise.allSettled(records.map((record) => ctx.store.broadcasts.accept({ record, entries: entries(1), idempotency })));
    const { fulfilled, reasons } = outcomes(settled);
    expect(fulfilled).toBe(1);
    expect(reasons.map(codeOf)).toEqual(Array(3).fill('conflict'));
    expect((await Promise.all(records.map((r) => ctx.store.broadcasts.get(r.id)))).filter(Boolean)).toHaveLength(1);
  });

  it('cancels: entries not expanded are gone, queued messages leave the queue, and a second cancel answers the same', async () => {
    const b = await expanded(4, 2);
    const now = new Date();
    const r = await ctx.store.broadcasts.cancel(b.id, now);
    expect(r).toMatchObject({ status: 'canceled', record: { state: 'done', canceledAt: now.toISOString(), canceledEntries: 2 } });
    expect(await ctx.store.broadcasts.entries(b.id, 0, 10)).toEqual([]);
    expect(await ctx.store.broadcasts.nextActive()).toBeUndefined();
    expect(await ctx.store.broadcasts.counters(b.id)).toMatchObject({ finished: 2, canceled: 2 });
    expect(await ctx.store.broadcasts.cancel(b.id, new Date(now.getTime() + 1000))).toEqual(r);
  });

  it("cancels each message as a message's cancel does: canceledAt on the record and its jobs, one canceled event for its recipients", async () => {
    const b = broadcast({ total: 3 });
    await ctx.store.broadcasts.accept({ record: b, entries: entries(3) });
    const messages = [accepted({ broadcastId: b.id, to: ['ann@example.org', 'bob@example.net'] }), accepted({ broadcastId: b.id, to: ['cy@example.org'] })];
    await ctx.store.messages.commit({ messages, broadcastProgress: { broadcastId: b.id, from: 0, cursor: 2, skipped: 0, failures: [], suppressed: [] } });
    const now = new Date();
    await ctx.store.broadcasts.cancel(b.id, now);
    for (const m of messages) {
      expect(await ctx.store.messages.get(m.record.id)).toMatchObject({ status: 'sent', openJobs: 0, canceledAt: now.toISOString() });
      expect((await ctx.store.queue.jobsOfMessage(m.record.id)).every((j) => j.state === 'done' && j.canceledAt === now.toISOString())).toBe(true);
      const events = await ctx.store.events.ofMessage(m.record.id);
      expect(events.map((e) => e.eventType)).toEqual(['accepted', 'processed', 'canceled']);
      expect(events[2]).toMatchObject({ mailType: 'broadcast', timestamp: now.toISOString() });
      expect([...events[2].recipients].sort()).toEqual([...m.record.recipients].sort());
    }
    // A second cancel appends nothing.
    await ctx.store.broadcasts.cancel(b.id, new Date(now.getTime() + 1000));
    expect((await ctx.store.events.ofMessage(messages[0].record.id)).filter((e) => e.eventType === 'canceled')).toHaveLength(1);
  });

  it('keeps a scheduled broadcast\'s time, and a cancel before it takes its messages, not yet due, out of the queue', async () => {
    const T0 = Date.now();
    const at = new Date(T0 + 3_600_000).toISOString();
    const b = { ...broadcast({ total: 3 }), scheduledAt: at };
    await ctx.store.broadcasts.accept({ record: b, entries: entries(3) });
    expect((await ctx.store.broadcasts.get(b.id))?.scheduledAt).toBe(at);
    expect((await ctx.store.broadcasts.nextActive())?.scheduledAt).toBe(at);
    const m = accepted({ broadcastId: b.id, scheduledAt: at });
    await ctx.store.messages.commit({ messages: [m], now: new Date(T0), broadcastProgress: { broadcastId: b.id, from: 0, cursor: 1, skipped: 0, failures: [], suppressed: [] } });
    expect((await ctx.store.queue.jobsOfMessage(m.record.id)).map((j) => j.dueAt)).toEqual([at]);
    const r = await ctx.store.broadcasts.cancel(b.id, new Date(T0 + 1000));
    expect(r).toMatchObject({ status: 'canceled', record: { scheduledAt: at, canceledEntries: 2 } });
    expect(await ctx.store.messages.get(m.record.id)).toMatchObject({ canceledAt: new Date(T0 + 1000).toISOString(), scheduledAt: at });
    expect(await ctx.store.broadcasts.counters(b.id)).toMatchObject({ finished: 1, canceled: 1 });
    expect((await ctx.store.queue.lease({ owner: 'n', nowMs: T0 + 7_200_000, max: 10, leaseMs: 60_000 })).jobs).toEqual([]);
    const store = await ctx.reopen();
    expect(await store.broadcasts.nextActive()).toBeUndefined();
    expect(await store.broadcasts.entries(b.id, 0, 10)).toEqual([]);
  });

  it('cancels once when cancels race: every caller sees the same canceled record', async () => {
    const b = await expanded(3, 1);
    const results = await Promise.all([0, 1, 2].map((i) => ctx.store.broadcasts.cancel(b.id, new Date(Date.now() + i * 1000))));
    expect(new Set(results.map((r) => (r.status === 'canceled' ? r.record.canceledAt : r.status))).size).toBe(1);
    expect((await ctx.store.broadcasts.counters(b.id)).canceled).toBe(1);
  });

  it('answers completed, changing nothing, for a broadcast whose every message finished', async () => {
    const b = await expanded(2, 2, { sandbox: true });
    expect(await ctx.store.broadcasts.counters(b.id)).toMatchObject({ finished: 2, canceled: 0 });
    expect(await ctx.store.broadcasts.cancel(b.id, new Date())).toEqual({ status: 'completed' });
    expect((await ctx.store.broadcasts.get(b.id))?.canceledAt).toBeUndefined();
  });

  it('either commits a batch that races a cancel and cancels its messages, or refuses it', async () => {
    const b = await expanded(2, 0);
    const m = accepted({ broadcastId: b.id });
    const [commit] = await Promise.allSettled([
      ctx.store.messages.commit({ messages: [m], broadcastProgress: { broadcastId: b.id, from: 0, cursor: 1, skipped: 0, failures: [], suppressed: [] } }),
      ctx.store.broadcasts.cancel(b.id, new Date()),
    ]);
    const record = await ctx.store.broadcasts.get(b.id);
    expect(record?.canceledAt).toBeDefined();
    const committed = commit.status === 'fulfilled';
    expect((await ctx.store.messages.get(m.record.id)) !== undefined).toBe(committed);
    expect((await ctx.store.broadcasts.counters(b.id)).canceled).toBe(committed ? 1 : 0);
  });

  it('pages the failure rows in entry order and the suppressed recipients in address order', async () => {
    const b = broadcast({ total: 3 });
    await ctx.store.broadcasts.accept({ record: b, entries: entries(3) });
    const failure = (index: number) => ({ index, to: [{ email: `r${index}@example.org` }], cc: [], bcc: [], code: 'recipients_suppressed', message: 'suppressed' });
    await ctx.store.messages.commit({
      messages: [],
      broadcastProgress: { broadcastId: b.id, from: 0, cursor: 3, skipped: 3, failures: [failure(2), failure(0), failure(1)], suppressed: ['z@example.org', 'a@example.org', 'm@example.org'] },
    });
    expect(await ctx.store.broadcasts.failures(b.id, { limit: 2, offset: 1 })).toEqual({ totalCount: 3, results: [failure(1), failure(2)] });
    expect(await ctx.store.broadcasts.suppressions(b.id, { limit: 2, offset: 0 })).toEqual({ totalCount: 3, results: ['a@example.org', 'm@example.org'] });
    expect(await ctx.store.broadcasts.get(b.id)).toMatchObject({ skipped: 3, suppressed: 3, state: 'done' });
  });

  it("lists a channel's broadcasts newest first, among those the predicate accepts, with its counters", async () => {
    const base = Date.now() - 10_000;
    const made = [];
    for (let i = 0; i < 4; i++) made.push(await expanded(1, i % 2, { sandbox: true, createdAt: new Date(base + i * 1000).toISOString(), subject: `s${i}` }));
    const all = await ctx.store.broadcasts.listOfChannel<{ subject: string }>({ channelId: made[0]!.channelId, limit: 10, offset: 0, match: () => true });
    expect(all.results.map((v) => v.record.id)).toEqual([...made].reverse().map((b) => b.id));
    const finished = await ctx.store.broadcasts.listOfChannel<{ subject: string }>({ channelId: made[0]!.channelId, limit: 1, offset: 1, match: (v) => v.counters.finished > 0 });
    expect(finished.totalCount).toBe(2);
    expect(finished.results.map((v) => v.record.common.subject)).toEqual(['s1']);
    expect(await ctx.store.broadcasts.listOfChannel({ channelId: 'other-channel', limit: 10, offset: 0, match: () => true })).toEqual({ totalCount: 0, results: [] });
  });
});
