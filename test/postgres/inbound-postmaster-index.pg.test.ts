/**
 * Where postmaster@ goes (RFC 5321 4.5.1) is asked per RCPT on untrusted input, so the PostgreSQL
 * engine answers oldestEnabledOnDomain from migration 9's index of the enabled routes by domain,
 * never by reading the table: with 20,000 routes (the domain's oldest ones disabled) the answer
 * is right, the index was read, and the table was not scanned.
 */
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresStore } from '../../src/store/postgres/engine.js';
import { waitFor } from '../support/wait.js';

const url = process.env.POSTRIDER_TEST_PG_URL;
if (!url) throw new Error('POSTRIDER_TEST_PG_URL is not set: run the PostgreSQL tests with npm run test:pg');

const schema = `pm_${randomBytes(5).toString('hex')}`;
let sql: postgres.Sql;
let store: PostgresStore;

beforeAll(async () => {
  sql = postgres(url, { max: 2, onnotice: false });
  store = new PostgresStore({ url, schema, poolSize: 2 });
  await store.start();
});

afterAll(async () => {
  await store?.stop();
  await sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await sql.end({ timeout: 5 });
});

/** Lookups counted: far more than the stray sequential scans of the table that reach the collector late. */
const LOOKUPS = 60;

interface ScanCounts {
  seq: number;
  index: number;
  /** Index entries the scans of the index read: one per lookup when it seeks to the domain, thousands when it walks the index. */
  tuples: number;
}

/** The table's sequential scans and the index's scans, as the statistics collector has them now. */
async function scans(): Promise<ScanCounts> {
  return sql.begin(async (tx) => {
    await tx`SELECT pg_stat_clear_snapshot()`;
    const [t] = await tx<{ n: string }[]>`SELECT seq_scan AS n FROM pg_stat_user_tables WHERE schemaname = ${schema} AND relname = 'inbound_routes'`;
    const [i] = await tx<{ n: string; t: string }[]>`SELECT idx_scan AS n, idx_tup_read AS t FROM pg_stat_user_indexes WHERE schemaname = ${schema} AND indexrelname = 'inbound_routes_domain_enabled'`;
    return { seq: Number(t.n), index: Number(i.n), tuples: Number(i.t) };
  });
}

describe('oldestEnabledOnDomain on PostgreSQL', () => {
  it('reads the domain index of enabled routes, not the table', async () => {
    // Routes 1-10000 on busy.example (the first 5000 disabled), 10001-20000 on 100 other domains.
    await sql.unsafe(`
      INSERT INTO "${schema}".inbound_routes (id, account_id, channel_id, domain_id, address, created_at_ms, signing_key, doc)
      SELECT r.id, 'acct', 'ch', 'dom', r.address, 1700000000000 + i, 'whsec_x',
        jsonb_build_object('id', r.id, 'address', r.address, 'enabled', i > 5000)
      FROM generate_series(1, 20000) AS i,
        LATERAL (SELECT lpad(i::text, 8, '0') AS id,
          CASE WHEN i <= 10000 THEN 'r' || i || '@busy.example' ELSE 'r' || i || '@d' || (i % 100) || '.example' END AS address) r;
      ANALYZE "${schema}".inbound_routes;`);
    const before = await scans();
    const found = await store.inboundRoutes.oldestEnabledOnDomain('busy.example');
    expect(found).toMatchObject({ id: '00005001', address: 'r5001@busy.example', enabled: true });
    expect(await store.inboundRoutes.oldestEnabledOnDomain('quiet.example')).toBeUndefined();
    for (let i = 0; i < LOOKUPS; i++) await store.inboundRoutes.oldestEnabledOnDomain('busy.example');
    // The counters reach the collector when a session ends its transaction (at most a second
    // later), so a few sequential scans of the table made before `before` (the store's own start,
    // the insert's session) may still arrive: a lookup that scanned the table would add one per call.
    const after = await waitFor(async () => {
      const now = await scans();
      return now.index >= before.index + LOOKUPS + 2 ? now : undefined;
    }, { what: `${LOOKUPS + 2} scans of inbound_routes_domain_enabled counted` });
    expect(after.seq - before.seq).toBeLessThan(LOOKUPS / 2);
    // A seek: a walk of the whole index (a condition it cannot seek on) reads 15,000 entries a lookup.
    expect(after.tuples - before.tuples).toBeLessThan((LOOKUPS + 2) * 4);
  });
});
