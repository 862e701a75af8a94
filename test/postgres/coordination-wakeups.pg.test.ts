/**
 * The PostgreSQL coordination's wake-ups (coordination/postgres/wakeups.ts) beyond the contract:
 * they cross nodes through LISTEN/NOTIFY and stay inside their schema, the waker's own
 * notification does not call its listeners twice, a dropped LISTEN connection is reconnected
 * (its listeners woken once for what may have been lost), and stop() closes every connection.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { WakeTopic } from '../../src/coordination/port.js';
import type { PostgresCoordination } from '../../src/coordination/postgres/index.js';
import { PgCluster } from '../support/pg-coordination.js';

function nextWake(node: PostgresCoordination, topic: WakeTopic): Promise<void> {
  return new Promise((resolve) => {
    const off = node.onWake(topic, () => {
      off();
      resolve();
    });
  });
}

describe('PostgreSQL coordination: wake-ups', () => {
  let cluster: PgCluster;
  beforeEach(() => {
    cluster = new PgCluster();
  });
  afterEach(async () => {
    await cluster.dispose();
  });

  it('reaches the listeners of another node, and no node of another schema', async () => {
    const schema = cluster.freshSchema();
    const [a, b] = [await cluster.node(schema), await cluster.node(schema)];
    const otherSchema = cluster.freshSchema();
    const [other, otherPeer] = [await cluster.node(otherSchema), await cluster.node(otherSchema)];
    const strays: WakeTopic[] = [];
    other.onWake('queue', () => strays.push('queue'));
    const seen = nextWake(b, 'queue');
    a.wake('queue');
    await seen;
    // PostgreSQL delivers notifications to a session in commit order: had `other` listened to
    // a's channel, a's wake-up would have reached it before its peer's, sent after a's was seen.
    const peers = nextWake(other, 'outbox');
    otherPeer.wake('outbox');
    await peers;
    expect(strays).toEqual([]);
  });

  it('calls the waker’s own listeners once, not again when its notification comes back', async () => {
    const schema = cluster.freshSchema();
    const [a, b, c] = [await cluster.node(schema), await cluster.node(schema), await cluster.node(schema)];
    let calls = 0;
    a.onWake('purges', () => calls++);
    const seenByC = nextWake(c, 'purges');
    a.wake('purges');
    expect(calls).toBe(1);
    await seenByC; // a's NOTIFY has committed
    // b's notification commits after a's. Once a has seen a later one still (c's, sent after c
    // saw b's), a has read both: had its own been taken as a wake-up, the count would be 3.
    const bCommitted = nextWake(c, 'purges');
    b.wake('purges');
    await bCommitted;
    const later = nextWake(a, 'queue');
    c.wake('queue');
    await later;
    expect(calls).toBe(2);
  });

  it('listens again after its LISTEN connection was dropped, and wakes its listeners for what was lost meanwhile', async () => {
    const schema = cluster.freshSchema();
    const [a, b] = [await cluster.node(schema), await cluster.node(schema)];
    const before = await a.listenerPid();
    expect(before).toBeTypeOf('number');
    const caughtUp = Promise.all((['queue', 'outbox', 'broadcasts', 'purges'] as const).map((t) => nextWake(a, t)));
    await cluster.admin`SELECT pg_terminate_backend(${before!}::int4)`;
    await caughtUp;
    const after = await a.listenerPid();
    expect(after).not.toBe(before);
    const seen = nextWake(a, 'queue');
    b.wake('queue');
    await seen;
  });

  it('never throws from wake(), even once stopped, and closes its connections at stop()', async () => {
    const schema = cluster.freshSchema();
    const a = await cluster.node(schema);
    a.rate('attempts', { perSecond: 10 }).tryTake(1); // the bridge's connection too
    const mine = () => cluster.admin<{ n: number }[]>`SELECT count(*)::int4 AS n FROM pg_stat_activity WHERE application_name = ${`postrider coordination ${a.nodeId}`}`;
    expect((await mine())[0]!.n).toBeGreaterThanOrEqual(3);
    await a.stop();
    let calls = 0;
    a.onWake('queue', () => calls++);
    expect(() => a.wake('queue')).not.toThrow();
    expect(calls).toBe(1);
    // The server may list a closed connection for a moment after the client left.
    await vi.waitFor(async () => expect((await mine())[0]!.n).toBe(0), { timeout: 10_000 });
  });
});
