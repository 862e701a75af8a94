/**
 * The PostgreSQL engine's schema migrations (store/postgres/migrations.ts): several nodes
 * starting at once on an empty database apply each migration exactly once, a restart applies
 * nothing, and a database migrated by a newer postrider is refused with a clear error.
 */
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { latestVersion, migrate, schemaVersion } from '../../src/store/postgres/migrations.js';
import { MIGRATIONS } from '../../src/store/postgres/schema/index.js';
import { StoreProblem } from '../../src/store/port/problems.js';
import { PostgresStore } from '../../src/store/postgres/engine.js';

const url = process.env.POSTRIDER_TEST_PG_URL;
if (!url) throw new Error('POSTRIDER_TEST_PG_URL is not set: run the PostgreSQL tests with npm run test:pg');

describe('PostgreSQL schema migrations', () => {
  let sql: postgres.Sql;
  const schemas: string[] = [];
  const freshSchema = () => {
    const s = `migr_${randomBytes(5).toString('hex')}`;
    schemas.push(s);
    return s;
  };

  beforeAll(() => {
    sql = postgres(url, { max: 8, onnotice: false });
  });

  afterAll(async () => {
    for (const s of schemas) await sql.unsafe(`DROP SCHEMA IF EXISTS "${s}" CASCADE`);
    await sql.end({ timeout: 5 });
  });

  it('three nodes starting at once apply every migration once, and a restart applies nothing', async () => {
    const schema = freshSchema();
    const applied: number[] = [];
    const stores = [0, 1, 2].map(() => new PostgresStore({ url, schema, poolSize: 2, onMigration: (v) => applied.push(v) }));
    await Promise.all(stores.map((s) => s.start()));
    try {
      expect(applied).toEqual(MIGRATIONS.map((m) => m.version));
      expect(stores.map((s) => s.healthy())).toEqual([true, true, true]);
      const rows = await sql.unsafe<{ version: number }[]>(`SELECT version FROM "${schema}".schema_migrations`);
      expect(rows.map((r) => r.version)).toEqual(MIGRATIONS.map((m) => m.version));
    } finally {
      await Promise.all(stores.map((s) => s.stop()));
    }
    const again = await migrate(sql, schema);
    expect(again).toMatchObject({ from: latestVersion(), to: latestVersion(), applied: [] });
    expect(await schemaVersion(sql, schema)).toBe(latestVersion());
  });

  it('a database at version 1 (the release before inbound mail) is migrated to the latest at start and gains the inbound tables', async () => {
    const schema = freshSchema();
    // What the release before issue 33 applied: migration 1 only.
    await sql.begin(async (tx) => {
      await tx.unsafe(`CREATE SCHEMA "${schema}"`);
      await tx.unsafe(`CREATE TABLE "${schema}".schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
      await tx.unsafe(`SET LOCAL search_path TO "${schema}"`);
      await tx.unsafe(MIGRATIONS[0]!.sql);
      await tx.unsafe(`INSERT INTO "${schema}".schema_migrations (version, name) VALUES (1, 'initial schema')`);
    });
    const store = new PostgresStore({ url, schema, poolSize: 1 });
    await store.start();
    try {
      const account = await store.accounts.create({ name: 'kept', state: 'active' });
      expect(await schemaVersion(sql, schema)).toBe(latestVersion());
      const tables = await sql<{ t: string }[]>`SELECT table_name AS t FROM information_schema.tables WHERE table_schema = ${schema} AND table_name LIKE 'inbound%' ORDER BY 1`;
      expect(tables.map((r) => r.t)).toEqual(['inbound_daily_counts', 'inbound_messages', 'inbound_routes']);
      expect(await store.inboundRoutes.list({ accountId: account.id, limit: 10, offset: 0 })).toMatchObject({ results: [] });
    } finally {
      await store.stop();
    }
  });

  it('reports version 0 for a schema never migrated', async () => {
    expect(await schemaVersion(sql, freshSchema())).toBe(0);
  });

  it('refuses a database whose schema a newer postrider migrated, naming both versions', async () => {
    const schema = freshSchema();
    await migrate(sql, schema);
    await sql.unsafe(`INSERT INTO "${schema}".schema_migrations (version, name) VALUES (${latestVersion() + 1}, 'from the future')`);
    const store = new PostgresStore({ url, schema, poolSize: 1 });
    const err = await store.start().then(
      () => undefined,
      (e: unknown) => e,
    );
    await store.stop();
    expect(err).toBeInstanceOf(StoreProblem);
    expect(err).toMatchObject({ code: 'store_too_new', exitCode: 78 });
    expect(String(err)).toContain(`version ${latestVersion() + 1}`);
  });

  it('a CLI command (mustExist) refuses a schema without a store and creates nothing', async () => {
    const schema = freshSchema();
    const store = new PostgresStore({ url, schema, poolSize: 1, mustExist: true });
    const err = await store.start().then(() => undefined, (e: unknown) => e);
    expect(err).toMatchObject({ code: 'no_store', exitCode: 66 });
    expect(String(err)).toContain(`schema ${schema} of postgres://postrider:***@`);
    expect(await schemaVersion(sql, schema)).toBe(0);
  });

  it('a database that cannot be reached is a one-line store_unreachable problem, without the password', async () => {
    const down = new URL(url);
    down.port = '1'; // nothing listens on port 1 of the loopback
    const store = new PostgresStore({ url: down.toString(), schema: freshSchema(), poolSize: 1 });
    const err = await store.start().then(() => undefined, (e: unknown) => e);
    expect(err).toMatchObject({ code: 'store_unreachable', exitCode: 75 });
    expect(String(err)).toContain('ECONNREFUSED');
    expect(String(err)).not.toContain(decodeURIComponent(new URL(url).password));
  });

  it('is not healthy once stopped, and serves again when started again (a new pool)', async () => {
    const store = new PostgresStore({ url, schema: freshSchema(), poolSize: 1 });
    await store.start();
    expect(store.healthy()).toBe(true);
    await store.stop();
    expect(store.healthy()).toBe(false);
    await store.start();
    try {
      expect(store.healthy()).toBe(true);
      const account = await store.accounts.create({ name: 'again', state: 'active' });
      expect((await store.accounts.get(account.id))?.name).toBe('again');
    } finally {
      await store.stop();
    }
  });
});
