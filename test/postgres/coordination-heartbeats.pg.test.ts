/**
 * Node heartbeats (coordination/postgres/heartbeats.ts; issue 32: a dead node's leases are
 * taken over within 60 s): a running node beats, so it is never gone; one that stopped beating
 * without a clean stop is listed by the others once its last beat is older than the stale
 * time; a clean stop removes the node at once, so nobody takes its (released) work for a dead
 * node's. Each node runs on its own fake clock, which its queries use as the database's now:
 * node A's clock stands still as a dead node's would, node B's moves on.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../support/fake-clock.js';
import { PgCluster } from '../support/pg-coordination.js';

describe('PostgreSQL coordination: node heartbeats', () => {
  let cluster: PgCluster;
  beforeEach(() => {
    cluster = new PgCluster();
  });
  afterEach(async () => {
    await cluster.dispose();
  });

  it('lists a node that stopped beating once its last beat is older than the stale time, and never itself', async () => {
    const schema = cluster.freshSchema();
    const [clockA, clockB] = [new FakeClock(), new FakeClock()];
    const a = await cluster.node(schema, clockA, { nodeId: 'node-a' });
    const b = await cluster.node(schema, clockB, { nodeId: 'node-b' });
    expect(await b.nodesGone(30_000)).toEqual([]);

    // B lives on (its timers beat every 5 s on its clock); A's clock stands still: no beat since 0.
    for (let i = 0; i < 6; i++) {
      clockB.advance(5_000);
      await b.settled();
    }
    expect(await b.nodesGone(40_000)).toEqual([]);
    expect(await b.nodesGone(29_000)).toEqual(['node-a']);
    // Seen from A, whose clock says no time passed, B beat in the future: not gone.
    expect(await a.nodesGone(29_000)).toEqual([]);
  });

  it('forgets a node at its clean stop', async () => {
    const schema = cluster.freshSchema();
    const [clockA, clockB] = [new FakeClock(), new FakeClock()];
    const a = await cluster.node(schema, clockA, { nodeId: 'node-a' });
    const b = await cluster.node(schema, clockB, { nodeId: 'node-b' });
    await a.stop();
    clockB.advance(60_000);
    await b.settled();
    expect(await b.nodesGone(30_000)).toEqual([]);
  });
});
