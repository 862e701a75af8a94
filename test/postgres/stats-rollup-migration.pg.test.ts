/**
 * Migrations 4 and 7 (issue 36, schema/stats-rollup.ts, stats-rollup-six-hours.ts) on a database
 * that holds counters already: the statistics read the same after them as before (the rollup is
 * filled from the quarter-hour and day rows, its six hours from its hours), and new events add to
 * the filled rows.
 */
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ZoneCalendar } from '../../src/domain/time-zone.js';
import { PostgresStore } from '../../src/store/postgres/engine.js';
import { latestVersion, schemaVersion } from '../../src/store/postgres/migrations.js';
import type { StatTotals } from '../../src/store/port/events.js';
import { seedEvents } from '../support/engine-fixtures.js';
import { eventDrafts } from '../support/events.js';

const url = process.env.POSTRIDER_TEST_PG_URL;
if (!url) throw new Error('POSTRIDER_TEST_PG_URL is not set: run the PostgreSQL tests with npm run test:pg');

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const T0 = Date.parse('2026-04-01T00:00:00Z');
const ACCOUNT = 'acct-migrate';
const CHANNELS = ['ch-a', 'ch-b'];

async function views(store: PostgresStore): Promise<Record<string, StatTotals | StatTotals[]>> {
  const scope = { accountId: ACCOUNT };
  return {
    kolkataDays: await store.stats.daySeries({ ...scope, edgesMs: ZoneCalendar.of('Asia/Kolkata')!.dayEdges(T0, T0 + 6 * DAY) }),
    aucklandDays: await store.stats.daySeries({ ...scope, edgesMs: ZoneCalendar.of('Pacific/Auckland')!.dayEdges(T0, T0 + 6 * DAY) }),
    stJohnsDays: await store.stats.daySeries({ ...scope, channelIds: [CHANNELS[1]], edgesMs: ZoneCalendar.of('America/St_Johns')!.dayEdges(T0, T0 + 6 * DAY) }),
    utcDays: await store.stats.daySeries({ ...scope, edgesMs: ZoneCalendar.of('UTC')!.dayEdges(T0, T0 + 6 * DAY) }),
    hours: await store.stats.series({ ...scope, edgesMs: Array.from({ length: 73 }, (_, i) => T0 + DAY + i * HOUR) }),
    oneChannel: await store.stats.series({ ...scope, channelIds: [CHANNELS[0]], edgesMs: Array.from({ length: 40 }, (_, i) => T0 + 2 * DAY + 30 * 60_000 + i * HOUR) }),
    totals: await store.stats.totals({ ...scope, fromDay: 0, toDay: Number.MAX_SAFE_INTEGER }),
  };
}

const drafts = (seed: number) => eventDrafts({ accountId: ACCOUNT, channelIds: CHANNELS, count: 500, startMs: T0 + HOUR, endMs: T0 + 6 * DAY, seed, lateShare: 0.1, messages: 50 });

describe('PostgreSQL migrations 4 and 7, the statistics rollup and its six hours', () => {
  let sql: postgres.Sql;
  const schema = `rollup_${randomBytes(5).toString('hex')}`;

  beforeAll(() => {
    sql = postgres(url, { max: 2, onnotice: false });
  });

  afterAll(async () => {
    await sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await sql.end({ timeout: 5 });
  });

  /** Rollup rows that a fresh fill from stat_counters (every grain) would not make: 0 when the rollup is whole. */
  async function rollupNotFromCounters(): Promise<number> {
    const [fresh] = await sql.unsafe<{ n: number }[]>(`
      SELECT count(*)::int AS n FROM (
        SELECT account_id, channel_id, grain, bucket, mail_type, sent, delivered, opened, clicked, bounced, unsubscribed, complained FROM "${schema}".stat_rollup
        WHERE (sent, delivered, opened, clicked, bounced, unsubscribed, complained) <> (0, 0, 0, 0, 0, 0, 0)
        EXCEPT ALL
        SELECT s.account_id, c.channel_id, l.grain, floor(s.bucket::numeric / l.quarters)::int8, s.mail_type,
          sum(s.sent), sum(s.delivered), sum(s.opened), sum(s.clicked), sum(s.bounced), sum(s.unsubscribed), sum(s.complained)
        FROM "${schema}".stat_counters s
        JOIN (VALUES ('q'::"char", 'q'::"char", 1), ('h', 'q', 4), ('s', 'q', 24), ('d', 'd', 1)) AS l(grain, source, quarters) ON l.source = s.grain
        CROSS JOIN LATERAL (VALUES (s.channel_id), ('')) AS c(channel_id)
        WHERE s.tag = '' GROUP BY 1, 2, 3, 4, 5) d`);
    return fresh.n;
  }

  /** Events written through a store at the latest version, and what the statistics say with the rollup written as they came. */
  const seededViews = async (seed: number): Promise<Awaited<ReturnType<typeof views>>> => {
    const store = new PostgresStore({ url, schema, poolSize: 2 });
    await store.start();
    try {
      await seedEvents(store, drafts(seed), { batch: 100 });
      return await views(store);
    } finally {
      await store.stop();
    }
  };

  it('fills the rollup from the counters there, so every read answers as before, and new events add to it', async () => {
    const before = await seededViews(81);
    // The database as version 3 left it: the same counters, no rollup, and none of the later
    // migrations' tables, columns and indexes either (they run again after 4: migration 6's change
    // marks, migration 8's claim owner, migration 9's index of enabled routes).
    await sql.unsafe(`DROP TABLE "${schema}".stat_rollup, "${schema}".stat_changes; ALTER TABLE "${schema}".inbound_messages DROP COLUMN claim_owner;
      DROP INDEX "${schema}".inbound_routes_domain_enabled;
      DELETE FROM "${schema}".schema_migrations WHERE version >= 4`);
    expect(await schemaVersion(sql, schema)).toBe(3);

    const store = new PostgresStore({ url, schema, poolSize: 2 });
    await store.start();
    try {
      expect(await schemaVersion(sql, schema)).toBe(latestVersion());
      expect(await views(store)).toEqual(before);
      await seedEvents(store, drafts(82), { batch: 100 });
      const after = await views(store);
      expect(after).not.toEqual(before);
      // The filled rows plus what the new events added are what a fresh fill from stat_counters makes.
      expect(await rollupNotFromCounters()).toBe(0);
    } finally {
      await store.stop();
    }
  });

  it('migration 7 fills the six hours from the hours of a version 6 database, and reads answer as before in zones off UTC', async () => {
    const before = await seededViews(83);
    // The database as version 6 left it: no six-hour records, the grain check without them, no index of them (nor migration 8's claim owner, nor migration 9's index of enabled routes).
    await sql.unsafe(`
      DELETE FROM "${schema}".stat_rollup WHERE grain = 's';
      DROP INDEX "${schema}".stat_rollup_phase_six;
      ALTER TABLE "${schema}".stat_rollup DROP CONSTRAINT stat_rollup_grain_check;
      ALTER TABLE "${schema}".stat_rollup ADD CONSTRAINT stat_rollup_grain_check CHECK (grain IN ('q', 'h', 'd'));
      ALTER TABLE "${schema}".inbound_messages DROP COLUMN claim_owner;
      DROP INDEX "${schema}".inbound_routes_domain_enabled;
      DELETE FROM "${schema}".schema_migrations WHERE version >= 7`);
    expect(await schemaVersion(sql, schema)).toBe(6);

    const store = new PostgresStore({ url, schema, poolSize: 2 });
    await store.start();
    try {
      expect(await schemaVersion(sql, schema)).toBe(latestVersion());
      const [six] = await sql.unsafe<{ n: number }[]>(`SELECT count(*)::int AS n FROM "${schema}".stat_rollup WHERE grain = 's'`);
      expect(six.n).toBeGreaterThan(0);
      expect(await rollupNotFromCounters()).toBe(0);
      expect(await views(store)).toEqual(before);
      await seedEvents(store, drafts(84), { batch: 100 });
      expect(await rollupNotFromCounters()).toBe(0);
    } finally {
      await store.stop();
    }
  });
});
