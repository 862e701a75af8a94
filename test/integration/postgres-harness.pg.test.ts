/**
 * The throw-away PostgreSQL of `npm run test:pg` (test/support/postgres.ts, issue 32) is what the
 * PostgreSQL engine will be tested on: it runs with the durability settings postrider promises
 * (fsync, synchronous_commit), the driver commits and rolls back through it, and `FOR UPDATE SKIP
 * LOCKED`, which the queue's batch claims rest on, hands a row to one claimer only.
 *
 * Run by `npm run test:pg` only (vitest.config.ts leaves *.pg.test.ts out of `npm test`), which
 * starts the cluster and sets POSTRIDER_TEST_PG_URL.
 */
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const url = process.env.POSTRIDER_TEST_PG_URL;
if (!url) throw new Error('POSTRIDER_TEST_PG_URL is not set: run the PostgreSQL tests with npm run test:pg');

describe('the test PostgreSQL (npm run test:pg)', () => {
  let sql: postgres.Sql;

  beforeAll(async () => {
    sql = postgres(url, { max: 6, onnotice: () => {} });
    await sql`DROP SCHEMA IF EXISTS harness CASCADE`;
    await sql`CREATE SCHEMA harness`;
  });

  afterAll(async () => {
    await sql`DROP SCHEMA IF EXISTS harness CASCADE`;
    await sql.end({ timeout: 5 });
  });

  it('runs with fsync and synchronous_commit on (a COMMIT returns once its WAL is flushed)', async () => {
    const rows = await sql<{ name: string; setting: string }[]>`
      SELECT name, setting FROM pg_settings WHERE name IN ('fsync', 'synchronous_commit') ORDER BY name`;
    expect(rows.map((r) => [r.name, r.setting])).toEqual([
      ['fsync', 'on'],
      ['synchronous_commit', 'on'],
    ]);
  });

  it('commits a transaction, and a failed one leaves nothing behind', async () => {
    await sql`CREATE TABLE harness.notes (id int PRIMARY KEY, body text NOT NULL)`;
    await sql.begin(async (tx) => {
      await tx`INSERT INTO harness.notes VALUES (1, 'one')`;
      await tx`INSERT INTO harness.notes VALUES (2, 'two')`;
    });
    await expect(
      sql.begin(async (tx) => {
        await tx`INSERT INTO harness.notes VALUES (3, 'three')`;
        await tx`INSERT INTO harness.notes VALUES (1, 'duplicate')`; // unique violation: the whole transaction rolls back
      }),
    ).rejects.toThrow(/duplicate key/);
    const rows = await sql<{ id: number }[]>`SELECT id FROM harness.notes ORDER BY id`;
    expect(rows.map((r) => r.id)).toEqual([1, 2]);
  });

  it('SKIP LOCKED: a claimer passes over the rows another open transaction holds, without waiting', async () => {
    await sql`CREATE TABLE harness.held (id int PRIMARY KEY)`;
    await sql`INSERT INTO harness.held SELECT generate_series(1, 10)`;
    await sql.begin(async (first) => {
      const mine = await first<{ id: number }[]>`SELECT id FROM harness.held ORDER BY id LIMIT 4 FOR UPDATE SKIP LOCKED`;
      expect(mine.map((r) => r.id)).toEqual([1, 2, 3, 4]);
      // Another connection while `first` still holds its locks: it gets the next rows at once.
      const other = await sql.begin(async (second) => {
        await second`SET LOCAL lock_timeout = '2s'`;
        return second<{ id: number }[]>`SELECT id FROM harness.held ORDER BY id LIMIT 4 FOR UPDATE SKIP LOCKED`;
      });
      expect(other.map((r) => r.id)).toEqual([5, 6, 7, 8]);
    });
  });

  it('SKIP LOCKED: two concurrent claimers never get the same row, and together get every row', async () => {
    const ROWS = 300;
    await sql`CREATE TABLE harness.jobs (id int PRIMARY KEY, claimed_by text)`;
    await sql`INSERT INTO harness.jobs (id) SELECT generate_series(1, ${ROWS})`;

    // Each claimer: a transaction that locks up to 7 free rows, holds them a moment, marks them its own.
    const claimer = async (name: string): Promise<number[]> => {
      const got: number[] = [];
      for (;;) {
        const batch = await sql.begin(async (tx) => {
          const rows = await tx<{ id: number }[]>`
            SELECT id FROM harness.jobs WHERE claimed_by IS NULL ORDER BY id LIMIT 7 FOR UPDATE SKIP LOCKED`;
          const ids = rows.map((r) => r.id);
          if (ids.length === 0) return ids;
          await tx`SELECT pg_sleep(0.002)`; // widen the window in which the other claimer runs
          await tx`UPDATE harness.jobs SET claimed_by = ${name} WHERE id = ANY(${ids}::int[])`;
          return ids;
        });
        if (batch.length === 0) return got;
        got.push(...batch);
      }
    };
    const [a, b] = await Promise.all([claimer('a'), claimer('b')]);

    const overlap = a.filter((id) => b.includes(id));
    expect(overlap).toEqual([]);
    expect(new Set(a).size).toBe(a.length);
    expect(new Set(b).size).toBe(b.length);
    expect([...a, ...b].sort((x, y) => x - y)).toEqual(Array.from({ length: ROWS }, (_, i) => i + 1));
    // Both really ran at the same time: each claimed some of the rows.
    expect(a.length).toBeGreaterThan(0);
    expect(b.length).toBeGreaterThan(0);
    // The table agrees with what each claimer was handed.
    const owners = await sql<{ claimed_by: string; n: number }[]>`
      SELECT claimed_by, count(*)::int AS n FROM harness.jobs GROUP BY claimed_by ORDER BY claimed_by`;
    expect(owners.map((r) => [r.claimed_by, r.n])).toEqual([
      ['a', a.length],
      ['b', b.length],
    ]);
  });
});
