/**
 * Migrations 5 and 7 (schema/stats-rollup-phase.ts, stats-rollup-six-hours.ts): a series in a zone
 * whose days do not start on a UTC midnight reads the finer records at its edges through
 * stat_rollup_phase (quarter hours, hours) and stat_rollup_phase_six (six hours), one index scan
 * per (grain, phase), also once PostgreSQL plans the prepared statement generically (after its
 * fifth run), and answers what the quarter hours say.
 */
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { coarseFor, rollupPlan } from '../../src/domain/stat-levels.js';
import { phaseReads } from '../../src/domain/stat-phases.js';
import { quarterOf } from '../../src/domain/stat-counters.js';
import { ZoneCalendar } from '../../src/domain/time-zone.js';
import { PostgresStore } from '../../src/store/postgres/engine.js';
import { PG_EDGE_LEVELS } from '../../src/store/postgres/stats-rollup.js';
import { seedEvents } from '../support/engine-fixtures.js';
import { eventDrafts } from '../support/events.js';
import { waitFor } from '../support/wait.js';

const url = process.env.POSTRIDER_TEST_PG_URL;
if (!url) throw new Error('POSTRIDER_TEST_PG_URL is not set: run the PostgreSQL tests with npm run test:pg');

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const QUARTER = 900_000;
const T0 = Date.parse('2026-03-01T00:00:00Z');
const ACCOUNT = 'acct-phase';
const CHANNELS = ['ch-a', 'ch-b'];

describe('PostgreSQL migrations 5 and 7, the rollup by time of day', () => {
  let sql: postgres.Sql;
  let store: PostgresStore;
  const schema = `phase_${randomBytes(5).toString('hex')}`;

  beforeAll(async () => {
    sql = postgres(url, { max: 1, onnotice: false });
    store = new PostgresStore({ url, schema, poolSize: 1 });
    await store.start();
    await seedEvents(store, eventDrafts({ accountId: ACCOUNT, channelIds: CHANNELS, count: 600, startMs: T0, endMs: T0 + 40 * DAY, seed: 5, messages: 60 }), { batch: 100 });
  });

  afterAll(async () => {
    await store?.stop();
    await sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await sql.end({ timeout: 5 });
  });

  /** Scans of the phase indexes so far and the index entries they read, as the statistics collector has them. */
  async function phaseScans(): Promise<{ scans: number; entries: number }> {
    const [row] = await sql<{ scans: string | null; entries: string | null }[]>`
      SELECT sum(idx_scan)::text AS scans, sum(idx_tup_read)::text AS entries FROM pg_stat_user_indexes
      WHERE schemaname = ${schema} AND indexrelname IN ('stat_rollup_phase', 'stat_rollup_phase_six')`;
    return { scans: Number(row?.scans ?? 0), entries: Number(row?.entries ?? 0) };
  }

  it('reads a Kolkata month of days with one scan per phase on every run, generic plan included, and answers as the quarter hours do', async () => {
    const edgesMs = ZoneCalendar.of('Asia/Kolkata')!.dayEdges(T0 + DAY, T0 + 36 * DAY);
    const scope = { accountId: ACCOUNT, channelIds: [CHANNELS[0]] };
    const edges = edgesMs.map(quarterOf);
    const fine = phaseReads(rollupPlan(edges, coarseFor(edges, 'd'), PG_EDGE_LEVELS));
    // The 18:00 six hours less its first two quarter hours: 3 phases (hours alone would be 7).
    const perRun = fine.s.reads.length + fine.h.reads.length + fine.q.reads.length;
    expect(perRun).toBe(3);

    const runs = 12;
    const before = await phaseScans();
    const answers = [];
    for (let i = 0; i < runs; i++) answers.push(JSON.stringify(await store.stats.daySeries({ ...scope, edgesMs })));
    expect(new Set(answers).size).toBe(1);
    // The backends report their counts when idle (at most once a second): wait for all of them.
    const after = await waitFor(async () => {
      const now = await phaseScans();
      return now.scans - before.scans >= runs * perRun && now;
    }, { what: `${runs * perRun} scans of the phase indexes`, timeout: 20_000 });
    // Each scan reads the records at its phase only (one a day and mail type), not the channel's
    // whole grain, which the index's leading columns alone would give.
    expect(after.entries - before.entries).toBeLessThanOrEqual(runs * perRun * 36 * 2);

    // The same days summed from a series of quarter hours (quarter-hour records alone, no phases).
    const quarters = Array.from({ length: (edgesMs[edgesMs.length - 1]! - edgesMs[0]!) / QUARTER + 1 }, (_, i) => edgesMs[0]! + i * QUARTER);
    const points = await store.stats.series({ ...scope, edgesMs: quarters });
    const sent = edgesMs.slice(1).map(() => 0);
    points.forEach((p, k) => (sent[edgesMs.findIndex((e, j) => j < sent.length && quarters[k]! >= e && quarters[k]! < edgesMs[j + 1]!)] += p.transactional.sent + p.broadcast.sent));
    const days = JSON.parse(answers[0]!) as { transactional: { sent: number }; broadcast: { sent: number } }[];
    expect(days.map((d) => d.transactional.sent + d.broadcast.sent)).toEqual(sent);
    expect(sent.reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
  });
});
