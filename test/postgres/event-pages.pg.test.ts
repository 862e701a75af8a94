/**
 * The PostgreSQL engine's bounded walks over the event log (store/postgres/activity-page.ts):
 * with a small budget a page of a sparse filter comes back `partial`, its `after` where the walk
 * stopped, and following `after` still lists every match exactly once, in either order; a count
 * past its budget is extrapolated (totalCountExact false) and near the truth. The contract suite
 * never reaches the budgets (its logs are small), so they are checked here with budgets cut down.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventRecord } from '../../src/domain/types.js';
import { countOf, pageOf } from '../../src/store/postgres/activity-page.js';
import { scopeOf } from '../../src/store/postgres/activity-plan.js';
import { PostgresStore, pgContextOf } from '../../src/store/postgres/engine.js';
import { appendEvents } from '../../src/store/postgres/event-log.js';
import type { ActivityFilter } from '../../src/store/port/events.js';
import { eventDrafts } from '../support/events.js';

const url = process.env.POSTRIDER_TEST_PG_URL;
if (!url) throw new Error('POSTRIDER_TEST_PG_URL is not set: run the PostgreSQL tests with npm run test:pg');

const A = randomUUID();
const CHANNELS = [randomUUID(), randomUUID()];
const T0 = Date.parse('2026-03-01T00:00:00Z');

describe('PostgreSQL event log: bounded pages and counts', () => {
  let store: PostgresStore;
  let all: EventRecord[];
  const schema = `pages_${randomBytes(5).toString('hex')}`;

  beforeAll(async () => {
    store = new PostgresStore({ url, schema, poolSize: 4 });
    await store.start();
    const drafts = eventDrafts({ accountId: A, channelIds: CHANNELS, count: 3000, startMs: T0, endMs: T0 + 86_400_000, seed: 9, messages: 300 });
    all = await pgContextOf(store).begin((tx) => appendEvents(tx, drafts));
  });

  afterAll(async () => {
    await store.stop();
    const admin = postgres(url, { max: 1, onnotice: false });
    await admin.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await admin.end({ timeout: 5 });
  });

  /** Every page with a walk budget of `walk` candidates, following `after`. */
  async function walkAll(f: ActivityFilter, order: 'asc' | 'desc', walk: number) {
    const sql = pgContextOf(store).sql;
    const seqs: number[] = [];
    let partials = 0;
    let after = 0;
    for (let guard = 0; guard < 10_000; guard++) {
      const page = await pageOf(sql, f, { afterSeq: after, limit: 7, order }, await scopeOf(sql, f), walk);
      seqs.push(...page.results.map((e) => e.seq));
      if (page.partial) partials++;
      if (page.results.length === 0 && !page.partial) break;
      if (order === 'asc') expect(page.after).toBeGreaterThan(after);
      else if (after > 0) expect(page.after).toBeLessThan(after);
      after = page.after;
    }
    return { seqs, partials };
  }

  it.each(['asc', 'desc'] as const)('pages a sparse filter with a small budget (%s): partial pages, yet every match once', async (order) => {
    // Subject and a single event type: the lead is the event type, the subject checked on each row.
    const f: ActivityFilter = { accountId: A, eventTypes: ['clicked'], subject: 'invoice', channelId: CHANNELS[1] };
    const want = all
      .filter((e) => e.eventType === 'clicked' && e.subject.toLowerCase().includes('invoice') && e.channelId === CHANNELS[1])
      .map((e) => e.seq);
    expect(want.length).toBeGreaterThan(5);
    const { seqs, partials } = await walkAll(f, order, 40);
    expect(partials).toBeGreaterThan(0);
    expect(seqs).toEqual(order === 'asc' ? want : [...want].reverse());
  });

  it('counts exactly within the budget, and extrapolates past it', async () => {
    const sql = pgContextOf(store).sql;
    const f: ActivityFilter = { accountId: A, channelId: CHANNELS[0], subject: 'news' };
    const truth = all.filter((e) => e.channelId === CHANNELS[0] && e.subject.toLowerCase().includes('news')).length;
    const scope = await scopeOf(sql, f);
    expect(await countOf(sql, f, scope)).toEqual({ count: truth, exact: true });
    const rough = await countOf(sql, f, scope, { rows: 300, leadOnly: 300 });
    expect(rough.exact).toBe(false);
    expect(Math.abs(rough.count - truth)).toBeLessThan(truth * 0.5);
    const lead = { accountId: A, channelId: CHANNELS[0] };
    const leadTruth = all.filter((e) => e.channelId === CHANNELS[0]).length;
    expect(await countOf(sql, lead, await scopeOf(sql, lead), { rows: 300, leadOnly: 100_000 })).toEqual({ count: leadTruth, exact: true });
  });
});
