/**
 * EventsPort (store/port/events.ts): pages over the event log with the `after` cursor in both
 * orders, their counts, every filter, tenant isolation, the message list, a message's events
 * and owner, the log's bounds; and the cursor's guarantee while events are being appended.
 * Expected answers come from the events as seeded, filtered the slow, obvious way.
 */
import { randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';
import type { EventRecord, EventType } from '../../src/domain/types.js';
import type { ActivityFilter } from '../../src/store/port/events.js';
import type { StorePort } from '../../src/store/port/index.js';
import { eachEngine } from './engines.js';
import { seedEvents, type EventDraft } from './seed-events.js';
import { eventDrafts } from '../support/events.js';

const A = randomUUID();
const B = randomUUID();
const CHANNELS = [randomUUID(), randomUUID()];
const T0 = Date.parse('2026-04-01T00:00:00Z');
const HOUR = 3_600_000;

/** Synthetic history: 2 channels of account A over two days, some late, then account B's. */
function history(): EventDraft[] {
  const a = eventDrafts({ accountId: A, channelIds: CHANNELS, count: 240, startMs: T0, endMs: T0 + 48 * HOUR, seed: 5, lateShare: 0.15, lateMaxMs: 90_000, messages: 30 });
  const b = eventDrafts({ accountId: B, channelIds: [randomUUID()], count: 60, startMs: T0, endMs: T0 + 48 * HOUR, seed: 6, messages: 10 });
  return [...a, ...b];
}

/** What a filter must match, the obvious way (the port's field comments, literally). */
function expected(all: EventRecord[], f: ActivityFilter): EventRecord[] {
  return all.filter((e) => {
    const ts = Date.parse(e.timestamp);
    return (
      e.accountId === f.accountId &&
      (!f.channelId || e.channelId === f.channelId) &&
      (!f.messageId || e.messageId === f.messageId) &&
      (!f.recipient || e.recipients.some((r) => r.toLowerCase() === f.recipient!.toLowerCase())) &&
      (!f.subject || e.subject.toLowerCase().includes(f.subject.toLowerCase())) &&
      (!f.tags || e.tags.some((t) => f.tags!.includes(t))) &&
      (!f.mailType || e.mailType === f.mailType) &&
      (!f.eventTypes || f.eventTypes.includes(e.eventType)) &&
      (f.startMs === undefined || ts >= f.startMs) &&
      (f.endMs === undefined || ts <= f.endMs)
    );
  });
}

/** Every page of a filter, following `after`; each page's totalCount is kept. */
async function pageAll(store: StorePort, f: ActivityFilter, limit: number, order: 'asc' | 'desc' = 'asc'): Promise<{ seqs: number[]; totals: number[] }> {
  const seqs: number[] = [];
  const totals: number[] = [];
  let after = 0;
  for (;;) {
    const page = await store.events.page(f, { afterSeq: after, limit, order });
    totals.push(page.totalCount);
    seqs.push(...page.results.map((e) => e.seq));
    if (page.results.length === 0 && !page.partial) return { seqs, totals };
    if (order === 'asc') expect(page.after).toBeGreaterThan(after);
    else if (after > 0) expect(page.after).toBeLessThan(after);
    after = page.after;
  }
}

const FILTERS: Array<[string, Omit<ActivityFilter, 'accountId'>]> = [
  ['no filter', {}],
  ['a channel', { channelId: CHANNELS[1] }],
  ['a recipient in another case', { recipient: 'ANN@example.net' }],
  ['a subject substring in another case', { subject: 'weekly news' }],
  ['any of two tags', { tags: ['welcome', 'promo'] }],
  ['a mail type', { mailType: 'broadcast' }],
  ['any of three event types', { eventTypes: ['delivered', 'bounced', 'opened'] as EventType[] }],
  ['a time range (late events inside it included)', { startMs: T0 + 10 * HOUR, endMs: T0 + 30 * HOUR }],
  ['a start only', { startMs: T0 + 40 * HOUR }],
  ['an end only', { endMs: T0 + 5 * HOUR }],
  ['several at once', { channelId: CHANNELS[0], tags: ['news', 'billing'], eventTypes: ['accepted', 'processed', 'clicked'] as EventType[], startMs: T0 + 6 * HOUR }],
  ['a recipient nobody has', { recipient: 'nobody@example.com' }],
];

eachEngine('EventsPort', (ctx) => {
  it('answers an empty log with an empty page that keeps the cursor, and bounds before the first seq', async () => {
    const page = await ctx.store.events.page({ accountId: A }, { afterSeq: 7, limit: 10 });
    expect(page).toEqual({ results: [], after: 7, partial: false, totalCount: 0, totalCountExact: true });
    expect(await ctx.store.events.bounds()).toEqual({ floor: 1, last: 0 });
    expect(await ctx.store.events.ofMessage(randomUUID())).toEqual([]);
    expect(await ctx.store.events.ownerOfMessage(randomUUID())).toBeUndefined();
  });

  it('gives every appended event a seq above all earlier ones, and bounds that cover them', async () => {
    const first = await seedEvents(ctx, history().slice(0, 100));
    const second = await seedEvents(ctx, history().slice(100, 140), { batch: 7 });
    const seqs = [...first, ...second].map((e) => e.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set(seqs).size).toBe(seqs.length);
    const { floor, last } = await ctx.store.events.bounds();
    expect(floor).toBeLessThanOrEqual(seqs[0]);
    expect(last).toBe(seqs[seqs.length - 1]);
  });

  it.each(FILTERS)('pages %s oldest first, then newest first, exactly, with the total on every page', async (_name, filter) => {
    const all = await seedEvents(ctx, history());
    const f = { accountId: A, ...filter };
    const want = expected(all, f).map((e) => e.seq);
    const asc = await pageAll(ctx.store, f, 9);
    expect(asc.seqs).toEqual(want);
    expect(new Set(asc.totals)).toEqual(new Set([want.length]));
    const desc = await pageAll(ctx.store, f, 9, 'desc');
    expect(desc.seqs).toEqual([...want].reverse());
    expect(new Set(desc.totals)).toEqual(new Set([want.length]));
  });

  it('continues strictly after the cursor: the next page starts past `after`, in either order', async () => {
    const all = await seedEvents(ctx, history());
    const mine = expected(all, { accountId: A });
    const first = await ctx.store.events.page({ accountId: A }, { afterSeq: 0, limit: 5 });
    expect(first.results).toEqual(mine.slice(0, 5));
    expect(first.after).toBe(mine[4].seq);
    const next = await ctx.store.events.page({ accountId: A }, { afterSeq: first.after, limit: 5 });
    expect(next.results).toEqual(mine.slice(5, 10));
    const newest = await ctx.store.events.page({ accountId: A }, { afterSeq: 0, limit: 3, order: 'desc' });
    expect(newest.results).toEqual(mine.slice(-3).reverse());
    const older = await ctx.store.events.page({ accountId: A }, { afterSeq: newest.after, limit: 3, order: 'desc' });
    expect(older.results).toEqual(mine.slice(-6, -3).reverse());
  });

  it("keeps accounts apart: another account's events are in no page and no count, even by its message id", async () => {
    const all = await seedEvents(ctx, history());
    const theirs = all.filter((e) => e.accountId === B);
    const fromA = await pageAll(ctx.store, { accountId: A }, 500);
    expect(fromA.seqs.some((s) => theirs.some((e) => e.seq === s))).toBe(false);
    const byMessage = await ctx.store.events.page({ accountId: A, messageId: theirs[0].messageId }, { afterSeq: 0, limit: 100 });
    expect(byMessage.results).toEqual([]);
    expect(byMessage.totalCount).toBe(0);
    const fromB = await pageAll(ctx.store, { accountId: B }, 500);
    expect(fromB.seqs).toEqual(theirs.map((e) => e.seq));
  });

  it("lists a message's events in seq order, and tells its owner from its events", async () => {
    const all = await seedEvents(ctx, history());
    const one = all[3];
    expect(await ctx.store.events.ofMessage(one.messageId)).toEqual(all.filter((e) => e.messageId === one.messageId));
    expect(await ctx.store.events.ownerOfMessage(one.messageId)).toEqual({ accountId: one.accountId, channelId: one.channelId });
    const page = await pageAll(ctx.store, { accountId: one.accountId, messageId: one.messageId }, 2);
    expect(page.seqs).toEqual(all.filter((e) => e.messageId === one.messageId).map((e) => e.seq));
  });

  it('counts the events appended after a count, whatever the page', async () => {
    await seedEvents(ctx, history());
    const f = { accountId: A, tags: ['counted'] };
    expect((await ctx.store.events.page(f, { afterSeq: 0, limit: 2 })).totalCount).toBe(0);
    const draft = (i: number): EventDraft => ({
      accountId: A, channelId: CHANNELS[0], messageId: randomUUID(), mailType: 'transactional', mailSource: 'api', eventType: 'clicked',
      timestamp: new Date(T0 + 50 * HOUR + i).toISOString(), subject: 'Count me', recipients: ['c@example.net'], tags: ['counted'], metadata: {}, details: {},
    });
    await seedEvents(ctx, [0, 1, 2].map(draft));
    const first = await ctx.store.events.page(f, { afterSeq: 0, limit: 2 });
    expect(first.totalCount).toBe(3);
    await seedEvents(ctx, [3, 4].map(draft));
    const second = await ctx.store.events.page(f, { afterSeq: first.after, limit: 2 });
    expect(second.totalCount).toBe(5);
    expect(second.results).toHaveLength(2);
  });

  it('never skips an event: a reader paging while other callers append sees every event exactly once, in seq order', async () => {
    await seedEvents(ctx, history().slice(0, 50));
    const live = (i: number): EventDraft => ({
      accountId: A, channelId: CHANNELS[1], messageId: randomUUID(), mailType: 'broadcast', mailSource: 'api', eventType: 'opened',
      timestamp: new Date(T0 + 60 * HOUR + i).toISOString(), subject: 'Live', recipients: ['live@example.net'], tags: ['live'], metadata: { n: String(i) }, details: {},
    });
    const f = { accountId: A, channelId: CHANNELS[1] };
    const seen: number[] = [];
    let after = 0;
    let writing = true;
    const readPage = async () => {
      const page = await ctx.store.events.page(f, { afterSeq: after, limit: 4 });
      seen.push(...page.results.map((e) => e.seq));
      if (page.results.length > 0 || page.partial) after = page.after;
    };
    // Twenty callers append at once while one reader pages; the reader yields to I/O between pages.
    const writers = Promise.all(Array.from({ length: 20 }, (_, w) => seedEvents(ctx, [0, 1, 2].map((i) => live(w * 3 + i))))).finally(() => (writing = false));
    const reader = (async () => {
      while (writing) {
        await readPage();
        await new Promise((r) => setImmediate(r));
      }
    })();
    const appended = (await Promise.all([writers, reader]))[0].flat();
    for (let before = -1; before !== seen.length; ) {
      before = seen.length;
      await readPage();
    }
    const { seqs } = await pageAll(ctx.store, f, 500);
    expect(seen).toEqual(seqs);
    expect(new Set(seen).size).toBe(seen.length);
    for (const e of appended) expect(seen).toContain(e.seq);
  });

  it('lists messages by their accepted events, queued or sent, with their counts and the live fallback delivery type', async () => {
    const accepted = (i: number): EventDraft => ({
      accountId: A, channelId: CHANNELS[0], messageId: randomUUID(), mailType: 'transactional', mailSource: 'api', eventType: 'accepted',
      timestamp: new Date(T0 + i * 60_000).toISOString(), subject: `Message ${i}`, recipients: [`u${i}@example.net`], tags: [], metadata: {}, details: {},
    });
    const sent = await seedEvents(ctx, [0, 1, 2, 3].map(accepted));
    const queued = await seedEvents(ctx, [4, 5, 6].map(accepted), { queued: true });
    await seedEvents(ctx, history());
    const all = await ctx.store.events.messagePage({ accountId: A, subject: 'message' }, { afterSeq: 0, limit: 100 });
    expect(all.results.map((m) => m.accepted)).toEqual([...sent, ...queued]);
    expect(all.totalCount).toBe(7);
    // No message record and no channel record: a finished message of a channel that is gone.
    expect(all.results.every((m) => m.message === undefined && m.deliveryType === 'live')).toBe(true);
    const q = await ctx.store.events.messagePage({ accountId: A, messageStatus: 'queued' }, { afterSeq: 0, limit: 2 });
    expect(q.results.map((m) => m.accepted)).toEqual(queued.slice(0, 2));
    expect(q.totalCount).toBe(3);
    const s = await ctx.store.events.messagePage({ accountId: A, subject: 'message', messageStatus: 'sent' }, { afterSeq: 0, limit: 100, order: 'desc' });
    expect(s.results.map((m) => m.accepted)).toEqual([...sent].reverse());
    expect(s.totalCount).toBe(4);
  });

  it('keeps the log across a restart', async () => {
    const all = await seedEvents(ctx, history());
    const before = await pageAll(ctx.store, { accountId: A, tags: ['news'] }, 50);
    const store = await ctx.reopen();
    expect(await store.events.bounds()).toEqual({ floor: 1, last: all[all.length - 1].seq });
    expect(await pageAll(store, { accountId: A, tags: ['news'] }, 50)).toEqual(before);
  });
});
