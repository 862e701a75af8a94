/**
 * The PostgreSQL coordination's leases (coordination/postgres/leases.ts) beyond the contract:
 * a node restarted after a crash takes back at once what its previous run held (the lease of
 * its own node id written by another run), under a new generation that fences the old run's
 * writes; two components of one running node still never hold one lease together; generations
 * keep growing after a release deleted the row.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../support/fake-clock.js';
import { PgCluster } from '../support/pg-coordination.js';

describe('PostgreSQL coordination: leases', () => {
  let cluster: PgCluster;
  beforeEach(() => {
    cluster = new PgCluster();
  });
  afterEach(async () => {
    await cluster.dispose();
  });

  it('gives a restarted node back the leases of its previous run at once, and none of another node', async () => {
    const clock = new FakeClock();
    const schema = cluster.freshSchema();
    const before = await cluster.node(schema, clock, { nodeId: 'node-a' });
    const other = await cluster.node(schema, clock, { nodeId: 'node-b' });
    const old = (await before.own('finishing', 'node-a', 60_000))!;
    const others = (await other.lead('retention-sweep', 60_000))!;
    // The same node id again, as the daemon restarted on its data folder (the old run never released).
    const after = await cluster.node(schema, clock, { nodeId: 'node-a' });
    const back = await after.own('finishing', 'node-a', 60_000);
    expect(back).not.toBeNull();
    expect(back!.generation).toBeGreaterThan(old.generation);
    expect(await old.renew()).toBe(false);
    expect(await after.lead('retention-sweep', 60_000)).toBeNull();
    expect(await others.renew()).toBe(true);
    // Within one run, one holder at a time as ever.
    expect(await after.own('finishing', 'node-a', 60_000)).toBeNull();
  });

  it('keeps generations growing after a release removed the row', async () => {
    const schema = cluster.freshSchema();
    const node = await cluster.node(schema, new FakeClock());
    const first = (await node.lead('channel-purge', 60_000))!;
    await first.release();
    const rows = await cluster.admin.unsafe(`SELECT count(*)::int4 AS n FROM "${schema}".coord_leases`);
    expect(rows[0]!.n).toBe(0);
    const second = (await node.lead('channel-purge', 60_000))!;
    expect(second.generation).toBeGreaterThan(first.generation);
  });
});
