/**
 * The statistics rollup of hours and days (issue 36, domain/stat-levels.ts) through the port:
 * series composed from day, hour and quarter-hour records answer exactly what the quarter hours
 * alone answer and what the events say (the counting rule applied the slow way), for random
 * ranges of UTC and Asia/Kolkata (+05:30) days and hours, Asia/Kathmandu (+05:45) days, the whole
 * account and chosen channels; and a deleted channel stops counting at its delete, through every
 * batch of its purge, which leaves none of its rollup behind.
 */
import { randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';
import { zeroCounters, type StatTotals } from '../../src/domain/stat-counters.js';
import type { EventRecord } from '../../src/domain/types.js';
import { ZoneCalendar } from '../../src/domain/time-zone.js';
import type { CounterScope } from '../../src/store/port/events.js';
import type { StorePort } from '../../src/store/port/index.js';
import { eachEngine } from './engines.js';
import { seedEvents } from './seed-events.js';
import { counterDeltas, eventDrafts } from '../support/events.js';

const QUARTER = 900_000;
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const T0 = Date.parse('2026-03-01T00:00:00Z');
const SPAN_DAYS = 12;

const zeroTotals = (): StatTotals => ({ transactional: zeroCounters(), broadcast: zeroCounters() });

function oracle(events: EventRecord[], scope: CounterScope, edges: number[]): StatTotals[] {
  const out = edges.slice(1).map(zeroTotals);
  for (const { event: e, timeMs, counter, by } of counterDeltas(events)) {
    if (e.accountId !== scope.accountId || (scope.channelIds && !scope.channelIds.includes(e.channelId))) continue;
    const i = edges.findIndex((edge, k) => k < edges.length - 1 && timeMs >= edge && timeMs < edges[k + 1]);
    if (i >= 0) out[i][e.mailType][counter] += by;
  }
  return out;
}

/** The same buckets summed from a series of quarter hours (the finest records, read alone). */
async function fromQuarters(store: StorePort, scope: CounterScope, edges: number[]): Promise<StatTotals[]> {
  const quarters = Array.from({ length: (edges[edges.length - 1] - edges[0]) / QUARTER + 1 }, (_, i) => edges[0] + i * QUARTER);
  const points = await store.stats.series({ ...scope, edgesMs: quarters });
  const out = edges.slice(1).map(zeroTotals);
  points.forEach((p, k) => {
    const i = edges.findIndex((edge, j) => j < edges.length - 1 && quarters[k] >= edge && quarters[k] < edges[j + 1]);
    for (const t of ['transactional', 'broadcast'] as const) for (const n of Object.keys(p[t]) as (keyof StatTotals['transactional'])[]) out[i][t][n] += p[t][n];
  });
  return out;
}

function rng(seed: number): (n: number) => number {
  let x = seed;
  return (n) => (x = (x * 48271) % 2147483647) % n;
}

async function seeded(store: StorePort, ctx: Parameters<typeof seedEvents>[0]): Promise<{ accountId: string; channels: string[]; events: EventRecord[] }> {
  const accountId = (await store.accounts.create({ name: 'a', state: 'active' })).id;
  const channels: string[] = [];
  for (const name of ['one', 'two', 'three']) channels.push((await store.channels.create({ accountId, name, deliveryType: 'live', tracking: { links: false, opens: false }, maxPerAccount: 10 })).id);
  const drafts = [
    ...eventDrafts({ accountId, channelIds: channels, count: 900, startMs: T0 + HOUR, endMs: T0 + SPAN_DAYS * DAY - HOUR, seed: 61, lateShare: 0.1, lateMaxMs: 40 * 60_000, messages: 90 }),
    ...eventDrafts({ accountId: randomUUID(), channelIds: [randomUUID()], count: 100, startMs: T0, endMs: T0 + SPAN_DAYS * DAY, seed: 62, messages: 10 }),
  ];
  return { accountId, channels, events: await seedEvents(ctx, drafts, { batch: 150 }) };
}

const ZONES = ['UTC', 'Asia/Kolkata', 'Asia/Kathmandu'];

eachEngine('StatisticsPort rollup', (ctx) => {
  it('answers random day and hour ranges of UTC, Kolkata and Kathmandu as the quarter hours and the events do', async () => {
    const { accountId, channels, events } = await seeded(ctx.store, ctx);
    const rand = rng(5);
    const scopes: CounterScope[] = [{ accountId }, { accountId, channelIds: [channels[1]] }, { accountId, channelIds: [channels[0], channels[2], randomUUID()] }];
    for (let round = 0; round < 12; round++) {
      const scope = scopes[round % scopes.length];
      const zone = ZONES[round % ZONES.length];
      const from = T0 + rand(3 * DAY);
      const days = ZoneCalendar.of(zone)!.dayEdges(from, from + (1 + rand(8)) * DAY);
      const got = await ctx.store.stats.daySeries({ ...scope, edgesMs: days });
      expect(got, `${zone} days from ${new Date(days[0]).toISOString()}`).toEqual(oracle(events, scope, days));
      expect(got).toEqual(await fromQuarters(ctx.store, scope, days));
      // Hours of the zone: a whole number of hours from one of its midnights.
      const start = days[rand(days.length - 1)] + rand(20) * HOUR;
      const hours = Array.from({ length: 2 + rand(60) }, (_, i) => start + i * HOUR);
      expect(await ctx.store.stats.series({ ...scope, edgesMs: hours }), `${zone} hours`).toEqual(oracle(events, scope, hours));
    }
    const all = await ctx.store.stats.totals({ accountId, fromDay: 0, toDay: Number.MAX_SAFE_INTEGER });
    expect(all).toEqual(oracle(events, { accountId }, [0, Number.MAX_SAFE_INTEGER])[0]);
  });

  it('stops counting a deleted channel at its delete, through every batch of its purge, which leaves none of its rollup', async () => {
    const { accountId, channels, events } = await seeded(ctx.store, ctx);
    const left = events.filter((e) => e.channelId !== channels[1]);
    const days = ZoneCalendar.of('Asia/Kolkata')!.dayEdges(T0, T0 + SPAN_DAYS * DAY);
    const hours = Array.from({ length: 49 }, (_, i) => T0 + 2 * DAY + 30 * 60_000 + i * HOUR);
    const check = async (label: string) => {
      expect(await ctx.store.stats.daySeries({ accountId, edgesMs: days }), label).toEqual(oracle(left, { accountId }, days));
      expect(await ctx.store.stats.series({ accountId, edgesMs: hours }), label).toEqual(oracle(left, { accountId }, hours));
      expect(await ctx.store.stats.daySeries({ accountId, channelIds: [channels[1]], edgesMs: days }), label).toEqual(days.slice(1).map(zeroTotals));
      expect(await ctx.store.stats.totals({ accountId, fromDay: 0, toDay: Number.MAX_SAFE_INTEGER }), label).toEqual(oracle(left, { accountId }, [0, Number.MAX_SAFE_INTEGER])[0]);
    };
    await ctx.store.channels.delete(channels[1]);
    await check('after the delete');
    for (let batch = 1; ; batch++) {
      const r = await ctx.store.channels.purgeBatch(channels[1], 300);
      await check(`after purge batch ${batch}`);
      if (r.done) break;
      expect(batch).toBeLessThan(500);
    }
    expect((await ctx.store.channels.remains(channels[1])).stats).toBe(0);
    const store = await ctx.reopen();
    expect(await store.stats.daySeries({ accountId, edgesMs: days })).toEqual(oracle(left, { accountId }, days));
  });
});
