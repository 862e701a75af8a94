/**
 * StatisticsPort.changes (domain/stat-changes.ts): which writes move an account's change marks
 * (counters added to a quarter hour that has ended, a bounce that moves an old delivery, a
 * channel's delete) and which do not (counters of the current quarter hour), per account; and a
 * series read through the cache of closed buckets (statistics/series-cache.ts) over the engine,
 * which must follow every such change.
 */
import { randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';
import { MAX_CHANGE_MARKS } from '../../src/domain/stat-changes.js';
import { QUARTER_MS, quarterOf, zeroCounters } from '../../src/domain/stat-counters.js';
import type { EventRecord } from '../../src/domain/types.js';
import { StatisticsQueries } from '../../src/statistics/queries.js';
import { SeriesCache } from '../../src/statistics/series-cache.js';
import type { StorePort } from '../../src/store/port/index.js';
import { eachEngine } from './engines.js';
import { seedEvents, type EventDraft } from './seed-events.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

async function accountWithChannel(store: StorePort): Promise<{ accountId: string; channelId: string }> {
  const accountId = (await store.accounts.create({ name: 'a', state: 'active' })).id;
  const channel = await store.channels.create({ accountId, name: 'main', deliveryType: 'live', tracking: { links: false, opens: false }, maxPerAccount: 100 });
  return { accountId, channelId: channel.id };
}

function drafts(accountId: string, channelId: string) {
  const base = { accountId, channelId, messageId: randomUUID(), mailType: 'transactional' as const, mailSource: 'api' as const, subject: 's', tags: [], metadata: {}, details: {} };
  return (eventType: EventRecord['eventType'], ms: number, recipients = ['a@example.net']): EventDraft => ({ ...base, eventType, timestamp: new Date(ms).toISOString(), recipients });
}

/** Today's UTC midnight and the days before it, as day edges. */
function lastDays(n: number): number[] {
  const today = Math.floor(Date.now() / DAY) * DAY;
  return Array.from({ length: n + 1 }, (_, i) => today - (n - i) * DAY);
}

eachEngine('StatisticsPort change marks', (ctx) => {
  it('stay at epoch 0 for counters of the current quarter hour, and of an unknown account', async () => {
    const { accountId, channelId } = await accountWithChannel(ctx.store);
    expect(await ctx.store.stats.changes(accountId)).toEqual({ epoch: 0, quarters: [] });
    // Stamped a little into the future: the quarter hour cannot end while the append commits.
    const ev = drafts(accountId, channelId);
    await seedEvents(ctx, [ev('processed', Date.now() + QUARTER_MS), ev('delivered', Date.now() + QUARTER_MS)]);
    expect(await ctx.store.stats.changes(accountId)).toEqual({ epoch: 0, quarters: [] });
    expect(await ctx.store.stats.changes(randomUUID())).toEqual({ epoch: 0, quarters: [] });
  });

  it('move on once per commit that adds to ended quarter hours, with the earliest of them, for that account only', async () => {
    const mine = await accountWithChannel(ctx.store);
    const theirs = await accountWithChannel(ctx.store);
    const ev = drafts(mine.accountId, mine.channelId);
    const t = Date.now() - 3 * DAY;
    await seedEvents(ctx, [ev('processed', t + HOUR), ev('delivered', t), ev('opened', Date.now() + QUARTER_MS)]);
    expect(await ctx.store.stats.changes(mine.accountId)).toEqual({ epoch: 1, quarters: [quarterOf(t)] });
    expect(await ctx.store.stats.changes(theirs.accountId)).toEqual({ epoch: 0, quarters: [] });
  });

  it('move on with the delivery\'s quarter hour when a bounce arriving now moves that old delivery', async () => {
    const { accountId, channelId } = await accountWithChannel(ctx.store);
    const ev = drafts(accountId, channelId);
    const deliveredAt = Date.now() - 2 * DAY;
    await seedEvents(ctx, [ev('processed', deliveredAt - HOUR), ev('delivered', deliveredAt)]);
    const before = await ctx.store.stats.changes(accountId);
    await seedEvents(ctx, [ev('bounced', Date.now() + QUARTER_MS)]);
    const after = await ctx.store.stats.changes(accountId);
    expect(after.epoch).toBe(before.epoch + 1);
    expect(after.quarters.at(-1)).toBe(quarterOf(deliveredAt));
  });

  it('move on from quarter 0 at a channel\'s delete, and keep only the last marks', async () => {
    const { accountId, channelId } = await accountWithChannel(ctx.store);
    const ev = drafts(accountId, channelId);
    const t = Date.now() - DAY;
    for (let i = 0; i < MAX_CHANGE_MARKS + 5; i++) await seedEvents(ctx, [ev('opened', t + i * QUARTER_MS)]);
    expect(await ctx.store.channels.delete(channelId)).toBe(true);
    const marks = await ctx.store.stats.changes(accountId);
    expect(marks.epoch).toBe(MAX_CHANGE_MARKS + 6);
    expect(marks.quarters).toHaveLength(MAX_CHANGE_MARKS);
    expect(marks.quarters.at(-1)).toBe(0);
    expect(marks.quarters.at(-2)).toBe(quarterOf(t + (MAX_CHANGE_MARKS + 4) * QUARTER_MS));
    expect(marks.quarters[0]).toBe(quarterOf(t + 6 * QUARTER_MS));
  });

  it('let a cached series follow a bounce of an old delivery and a channel\'s delete, reading only what changed', async () => {
    const { accountId, channelId } = await accountWithChannel(ctx.store);
    const other = await ctx.store.channels.create({ accountId, name: 'other', deliveryType: 'live', tracking: { links: false, opens: false }, maxPerAccount: 100 });
    const ev = drafts(accountId, channelId);
    const days = lastDays(7);
    await seedEvents(ctx, [ev('processed', days[2] + HOUR), ev('delivered', days[2] + 2 * HOUR), drafts(accountId, other.id)('processed', days[5] + HOUR)]);
    const spans: number[][] = [];
    const { stats } = ctx.store;
    const counting: Pick<StorePort, 'stats'> = {
      stats: { totals: (q) => stats.totals(q), series: (q) => stats.series(q), changes: (a) => stats.changes(a), daySeries: (q) => (spans.push(q.edgesMs), stats.daySeries(q)) },
    };
    const queries = new StatisticsQueries({ store: counting, cache: new SeriesCache({ maxBuckets: 1000 }) });
    const scope = { accountId };
    const first = await queries.daySeries(scope, days);
    expect(first[2].transactional).toEqual({ ...zeroCounters(), sent: 1, delivered: 1 });
    expect(spans.at(-1)).toEqual(days);
    // Read again: every day has ended, nothing is read from the store.
    expect(await queries.daySeries(scope, days)).toEqual(first);
    expect(spans).toHaveLength(1);
    // A bounce now moves day 2's delivery: days 2 onwards are read again, days 0 and 1 are not.
    await seedEvents(ctx, [ev('bounced', Date.now() + QUARTER_MS)]);
    const second = await queries.daySeries(scope, days);
    expect(spans.at(-1)).toEqual(days.slice(2));
    expect(second[2].transactional).toEqual({ ...zeroCounters(), sent: 1 });
    expect(second.slice(0, 2)).toEqual(first.slice(0, 2));
    expect(second).toEqual(await ctx.store.stats.daySeries({ accountId, edgesMs: days }));
    // The other channel's delete: its day 5 count goes, every day is read again.
    expect(await ctx.store.channels.delete(other.id)).toBe(true);
    const third = await queries.daySeries(scope, days);
    expect(spans.at(-1)).toEqual(days);
    expect(third[5].transactional.sent).toBe(0);
    expect(second[5].transactional.sent).toBe(1);
  });
});
