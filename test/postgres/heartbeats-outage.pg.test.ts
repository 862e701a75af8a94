/**
 * Node heartbeats across an outage of PostgreSQL (coordination/postgres/heartbeats.ts, BeatRun):
 * while the database was down no node could beat, so every row is as old as the outage. The
 * first node back used to list every other node as gone at once and delivery took their leases,
 * so the messages they had delivered during the outage (their outcomes waiting to be recorded)
 * went out again: seen with three nodes and a 3-minute outage. A node now judges the others only
 * once it has itself beaten without a break for the stale time; a node that really stopped is
 * still listed then.
 *
 * Its own PostgreSQL (test/support/postgres.ts), to crash and start again. Node B is a row this
 * test beats by hand (heartbeats.ts, beat), so that it beats exactly when the test says.
 */
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { beat } from '../../src/coordination/postgres/heartbeats.js';
import { PostgresCoordination } from '../../src/coordination/postgres/index.js';
import { coordinationTime } from '../../src/coordination/postgres/time.js';
import { startPostgres, type PostgresCluster } from '../support/postgres.js';
import { waitFor } from '../support/wait.js';

const SCHEMA = 'heartbeats_outage';
const STALE_MS = 3_000;

describe('node heartbeats after PostgreSQL was down', () => {
  let pg: PostgresCluster;
  let a: PostgresCoordination;
  let sql: postgres.Sql;
  const failedBeats: unknown[] = [];

  beforeAll(async () => {
    pg = await startPostgres();
    a = new PostgresCoordination({ url: pg.url, schema: SCHEMA, nodeId: 'node-a', poolSize: 2, onError: (err) => failedBeats.push(err) });
    await a.start();
    sql = postgres(pg.url, { max: 1, onnotice: false, connection: { search_path: SCHEMA } });
  }, 60_000);

  afterAll(async () => {
    await a?.stop();
    await sql?.end({ timeout: 5 });
    await pg?.stop();
  });

  it('lists no other node until it has beaten again for the stale time, then one that stays silent', async () => {
    const beatB = () => beat(sql, 'node-b', 'run-b', coordinationTime());
    await beatB();
    const lastOfB = performance.now();

    await pg.crash();
    await waitFor(() => failedBeats.length > 0, { what: 'a beat of node A to fail' });
    await waitFor(() => performance.now() - lastOfB > STALE_MS + 500, { what: "B's row to be older than the stale time" });
    await pg.start();

    // The first answer once the database is back: B's row is older than the stale time, but so
    // would be that of every live node that had no turn to beat yet.
    const first = await waitFor(() => a.nodesGone(STALE_MS).then((gone) => ({ gone })), { what: 'node A to answer again', timeout: 5_000 });
    expect(first.gone).toEqual([]);

    // B stays silent: once A has beaten for the stale time, B is gone.
    await waitFor(async () => (await a.nodesGone(STALE_MS)).includes('node-b'), { what: 'node B to be listed as gone', timeout: 15_000 });
  }, 60_000);
});
