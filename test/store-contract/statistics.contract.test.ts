/**
 * StatisticsPort (store/port/events.ts): totals, series and day series of the counters the
 * engine keeps as events are appended, against the counting rule applied the slow way to the
 * events as seeded (support/events.ts counterDeltas); scopes (channels, tags counted once),
 * tenant isolation, the bounce-after-delivery rule, and no lost count under concurrent appends.
 */
import { randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';
import { zeroCounters, type StatTotals } from '../../src/domain/stat-counters.js';
import type { EventRecord } from '../../src/domain/types.js';
import type { CounterScope } from '../../src/store/port/events.js';
import { eachEngine } from './engines.js';
import { seedEvents, type EventDraft } from './seed-events.js';
import { counterDeltas, eventDrafts } from '../support/events.js';

const A = randomUUID();
const B = randomUUID();
const CHANNELS = [randomUUID(), randomUUID()];
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const T0 = Date.parse('2026-06-10T00:00:00Z');

const zeroTotals = (): StatTotals => ({ transactional: zeroCounters(), broadcast: zeroCounters() });

/** Three days of account A on two channels (late events too), and account B's on the same days. */
function history(): EventDraft[] {
  return [
    ...eventDrafts({ accountId: A, channelIds: CHANNELS, count: 400, startMs: T0 + HOUR, endMs: T0 + 3 * DAY - HOUR, seed: 41, lateShare: 0.1, lateMaxMs: 20 * 60_000, messages: 40 }),
    ...eventDrafts({ accountId: B, channelIds: [randomUUID()], count: 80, startMs: T0 + HOUR, endMs: T0 + 3 * DAY - HOUR, seed: 42, messages: 10 }),
  ];
}

/** The counters of buckets [edges[i], edges[i + 1]) for a scope, from the events themselves. */
function oracle(events: EventRecord[], scope: CounterScope, edges: number[]): StatTotals[] {
  const out = edges.slice(1).map(zeroTotals);
  for (const { event: e, timeMs, counter, by } of counterDeltas(events)) {
    if (e.accountId !== scope.accountId || (scope.channelIds && !scope.channelIds.includes(e.channelId))) continue;
    if (scope.tags && !e.tags.some((t) => scope.tags!.includes(t))) continue;
    const i = edges.findIndex((edge, k) => k < edges.length - 1 && timeMs >= edge && timeMs < edges[k + 1]);
    if (i >= 0) out[i][e.mailType][counter] += by;
  }
  return out;
}

const SCOPES: Array<[string, Omit<CounterScope, 'accountId'>]> = [
  ['the whole account', {}],
  ['one channel', { channelIds: [CHANNELS[0]] }],
  ['two tags, an event carrying both counted once', { tags: ['news', 'promo'] }],
  ['a channel and a tag', { channelIds: [CHANNELS[1]], tags: ['welcome'] }],
];

const edgesEvery = (fromMs: number, stepMs: number, n: number) => Array.from({ length: n + 1 }, (_, i) => fromMs + i * stepMs);

eachEngine('StatisticsPort', (ctx) => {
  it('answers zeros before any event, one point per bucket', async () => {
    expect(await ctx.store.stats.totals({ accountId: A, fromDay: 0, toDay: Number.MAX_SAFE_INTEGER })).toEqual(zeroTotals());
    expect(await ctx.store.stats.series({ accountId: A, edgesMs: edgesEvery(T0, HOUR, 3) })).toEqual([zeroTotals(), zeroTotals(), zeroTotals()]);
    expect(await ctx.store.stats.daySeries({ accountId: A, edgesMs: edgesEvery(T0, DAY, 2) })).toEqual([zeroTotals(), zeroTotals()]);
  });

  it.each(SCOPES)('counts totals over whole UTC days for %s', async (_name, scope) => {
    const events = await seedEvents(ctx, history());
    const q = { accountId: A, ...scope };
    const all = await ctx.store.stats.totals({ ...q, fromDay: 0, toDay: Number.MAX_SAFE_INTEGER });
    expect(all).toEqual(oracle(events, q, [0, Number.MAX_SAFE_INTEGER])[0]);
    expect(all.transactional.sent + all.broadcast.sent).toBeGreaterThan(0);
    const day = T0 / DAY + 1;
    expect(await ctx.store.stats.totals({ ...q, fromDay: day, toDay: day })).toEqual(oracle(events, q, [day * DAY, (day + 1) * DAY])[0]);
  });

  it.each(SCOPES)('gives an hourly series and a day series (days starting at 22:00 UTC) for %s', async (_name, scope) => {
    const events = await seedEvents(ctx, history());
    const q = { accountId: A, ...scope };
    const hours = edgesEvery(T0 + 20 * HOUR, HOUR, 30);
    expect(await ctx.store.stats.series({ ...q, edgesMs: hours })).toEqual(oracle(events, q, hours));
    // A zone at UTC+2: its days start at 22:00 UTC, so each edge is two hours before a UTC midnight.
    const days = edgesEvery(T0 - 2 * HOUR, DAY, 3);
    expect(await ctx.store.stats.daySeries({ ...q, edgesMs: days })).toEqual(oracle(events, q, days));
    // A zone at UTC-5:45 (edges after midnight), quarter-hour aligned.
    const late = edgesEvery(T0 + 5 * HOUR + 45 * 60_000, DAY, 3);
    expect(await ctx.store.stats.daySeries({ ...q, edgesMs: late })).toEqual(oracle(events, q, late));
  });

  it("keeps accounts apart: another account's events are in no counter", async () => {
    const events = await seedEvents(ctx, history());
    const theirs = await ctx.store.stats.totals({ accountId: B, fromDay: 0, toDay: Number.MAX_SAFE_INTEGER });
    expect(theirs).toEqual(oracle(events, { accountId: B }, [0, Number.MAX_SAFE_INTEGER])[0]);
    expect(await ctx.store.stats.totals({ accountId: randomUUID(), fromDay: 0, toDay: Number.MAX_SAFE_INTEGER })).toEqual(zeroTotals());
  });

  it('moves a recipient from delivered to bounced when a bounce follows the delivery, and counts a second bounce never', async () => {
    const base = { accountId: A, channelId: CHANNELS[0], messageId: randomUUID(), mailType: 'transactional' as const, mailSource: 'api' as const, subject: 's', tags: ['dsn'], metadata: {}, details: {} };
    const ev = (eventType: EventRecord['eventType'], ms: number, recipients: string[]): EventDraft => ({ ...base, eventType, timestamp: new Date(ms).toISOString(), recipients });
    await seedEvents(ctx, [ev('processed', T0, ['a@example.net', 'b@example.net']), ev('delivered', T0 + HOUR, ['a@example.net', 'b@example.net'])]);
    await seedEvents(ctx, [ev('bounced', T0 + DAY, ['A@example.net'])]);
    await seedEvents(ctx, [ev('bounced', T0 + DAY + HOUR, ['a@example.net'])]);
    const totals = await ctx.store.stats.totals({ accountId: A, tags: ['dsn'], fromDay: 0, toDay: Number.MAX_SAFE_INTEGER });
    expect(totals.transactional).toEqual({ ...zeroCounters(), sent: 2, delivered: 1, bounced: 1 });
    const [first, second] = await ctx.store.stats.daySeries({ accountId: A, tags: ['dsn'], edgesMs: edgesEvery(T0, DAY, 2) });
    expect(first.transactional).toEqual({ ...zeroCounters(), sent: 2, delivered: 1 });
    expect(second.transactional).toEqual({ ...zeroCounters(), bounced: 1 });
  });

  it('loses no count when many callers append events of the same buckets at once', async () => {
    const opened = (i: number): EventDraft => ({
      accountId: A, channelId: CHANNELS[1], messageId: randomUUID(), mailType: 'broadcast', mailSource: 'api', eventType: 'opened',
      timestamp: new Date(T0 + 5 * HOUR + i).toISOString(), subject: 's', recipients: ['x@example.net', 'y@example.net'], tags: ['t1', 't2'], metadata: {}, details: {},
    });
    await Promise.all(Array.from({ length: 25 }, (_, w) => seedEvents(ctx, [0, 1, 2, 3].map((i) => opened(w * 4 + i)))));
    const q = { accountId: A, channelIds: [CHANNELS[1]], fromDay: 0, toDay: Number.MAX_SAFE_INTEGER };
    expect((await ctx.store.stats.totals(q)).broadcast.opened).toBe(200);
    expect((await ctx.store.stats.totals({ ...q, tags: ['t2', 't1'] })).broadcast.opened).toBe(200);
    const [hour] = await ctx.store.stats.series({ accountId: A, edgesMs: [T0 + 5 * HOUR, T0 + 6 * HOUR] });
    expect(hour.broadcast.opened).toBe(200);
  });

  it('keeps the counters across a restart', async () => {
    await seedEvents(ctx, history());
    const q = { accountId: A, tags: ['billing'], fromDay: 0, toDay: Number.MAX_SAFE_INTEGER };
    const before = await ctx.store.stats.totals(q);
    const store = await ctx.reopen();
    expect(await store.stats.totals(q)).toEqual(before);
  });
});
