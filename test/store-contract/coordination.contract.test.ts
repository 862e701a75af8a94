/**
 * The coordination port's contract (src/coordination/port.ts), part one: node identity,
 * wake-ups, leadership and backlog ownership. Written once, run per implementation
 * (coordinations.ts). Time moves only through the fake clock: no sleep, no timed assertion.
 * Limits (rates, pacer, keyed limits, slots) are coordination-limits.contract.test.ts.
 */
import { expect, it } from 'vitest';
import { runAsLeader } from '../../src/coordination/leader.js';
import { isNodeId } from '../../src/coordination/node-id.js';
import type { Lease, WakeTopic } from '../../src/coordination/port.js';
import { eachCoordination } from './coordinations.js';

/** Resolves at the next wake-up of `topic` seen by `node`'s listener. */
function nextWake(node: { onWake(topic: WakeTopic, fn: () => void): () => void }, topic: WakeTopic): Promise<void> {
  return new Promise((resolve) => {
    const off = node.onWake(topic, () => {
      off();
      resolve();
    });
  });
}

eachCoordination('coordination: identity and wake-ups', (ctx) => {
  it('names every node with a usable id', () => {
    for (const node of ctx.nodes(3)) expect(isNodeId(node.nodeId)).toBe(true);
  });

  it('delivers a wake-up to the listeners of every node, the waker included', async () => {
    const [a, b, c] = ctx.nodes(3);
    const seen = Promise.all([nextWake(a!, 'queue'), nextWake(b!, 'queue'), nextWake(c!, 'queue')]);
    a!.wake('queue');
    await seen;
  });

  it('calls a topic’s listeners only, and no unsubscribed one', async () => {
    const node = ctx.node;
    const calls: string[] = [];
    const offOutbox = node.onWake('outbox', () => calls.push('outbox'));
    const offGone = node.onWake('queue', () => calls.push('unsubscribed'));
    offGone();
    const queue = nextWake(node, 'queue');
    node.wake('queue');
    // Delivered with the same notification as the one awaited: a call would have come by now.
    await queue;
    expect(calls).toEqual([]);
    offOutbox();
  });

  it('keeps a throwing listener from the waker and from the other listeners', async () => {
    const node = ctx.node;
    const off = node.onWake('broadcasts', () => {
      throw new Error('a listener bug');
    });
    const seen = nextWake(node, 'broadcasts');
    expect(() => node.wake('broadcasts')).not.toThrow();
    await seen;
    off();
  });
});

eachCoordination('coordination: leadership', (ctx) => {
  it('gives a task to exactly one of several racing nodes', async () => {
    const got = await Promise.all(ctx.nodes(5).map((n) => n.lead('retention-sweep', 60_000)));
    expect(got.filter((l) => l !== null)).toHaveLength(1);
  });

  it('gives the task again at once after a release, under a higher generation', async () => {
    const [a, b] = ctx.nodes(2);
    const first = (await a!.lead('channel-purge', 60_000))!;
    expect(first.owner).toBe(a!.nodeId);
    expect(await b!.lead('channel-purge', 60_000)).toBeNull();
    await first.release();
    const second = await b!.lead('channel-purge', 60_000);
    expect(second).not.toBeNull();
    expect(second!.generation).toBeGreaterThan(first.generation);
    expect(await first.renew()).toBe(false);
  });

  it('lets another node take a lease that ran past its ttl, and the old holder learns it lost it', async () => {
    const [a, b] = ctx.nodes(2);
    const old = (await a!.lead('domain-recheck', 10_000))!;
    ctx.clock.advance(9_999);
    expect(await b!.lead('domain-recheck', 10_000)).toBeNull();
    ctx.clock.advance(1);
    const taken = (await b!.lead('domain-recheck', 10_000))!;
    expect(taken).not.toBeNull();
    expect(taken.generation).toBeGreaterThan(old.generation);
    expect(await old.renew()).toBe(false);
    // The old holder's release must not free the new holder's lease.
    await old.release();
    expect(await a!.lead('domain-recheck', 10_000)).toBeNull();
    expect(await taken.renew()).toBe(true);
  });

  it('keeps a renewed lease past its first ttl, without a new generation', async () => {
    const [a, b] = ctx.nodes(2);
    const lease = (await a!.lead('tls-rpt-reports', 10_000))!;
    ctx.clock.advance(8_000);
    expect(await lease.renew()).toBe(true);
    ctx.clock.advance(8_000);
    expect(await b!.lead('tls-rpt-reports', 10_000)).toBeNull();
    expect(await lease.renew()).toBe(true);
    ctx.clock.advance(10_000);
    const next = (await b!.lead('tls-rpt-reports', 10_000))!;
    expect(next.generation).toBeGreaterThan(lease.generation);
  });

  it('leads each task on its own', async () => {
    const node = ctx.node;
    const leases = await Promise.all((['retention-sweep', 'channel-purge', 'domain-recheck', 'tls-rpt-reports'] as const).map((t) => node.lead(t, 60_000)));
    expect(leases.every((l) => l !== null)).toBe(true);
  });

  it('runs the work of one racing node only, and frees the task when the work ends or throws', async () => {
    const nodes = ctx.nodes(4);
    let runs = 0;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const racing = nodes.map((n) =>
      runAsLeader(n, 'retention-sweep', 60_000, async () => {
        // A second leader opens the gate, so that the test fails on the count instead of hanging.
        if (++runs > 1) release();
        await gate;
        return 'swept';
      }),
    );
    // The others are answered while the leader still works.
    let answered = 0;
    let othersAnswered!: () => void;
    const others = new Promise<void>((resolve) => (othersAnswered = resolve));
    for (const r of racing) void r.then(() => ++answered === nodes.length - 1 && othersAnswered());
    await others;
    expect(runs).toBe(1);
    release();
    const results = await Promise.all(racing);
    expect(results.filter((r) => r.ran)).toEqual([{ ran: true, value: 'swept' }]);
    await expect(runAsLeader(nodes[1]!, 'retention-sweep', 60_000, async () => Promise.reject(new Error('failed run')))).rejects.toThrow('failed run');
    expect(await nodes[2]!.lead('retention-sweep', 60_000)).not.toBeNull();
  });
});

eachCoordination('coordination: backlog ownership', (ctx) => {
  it('gives one part of a backlog to exactly one of several racing nodes', async () => {
    const got = await Promise.all(ctx.nodes(5).map((n) => n.own('broadcast-expansion', 'b-1', 60_000)));
    expect(got.filter((l) => l !== null)).toHaveLength(1);
  });

  it('owns each key, each backlog and each leader task apart', async () => {
    const node = ctx.node;
    const leases: Array<Lease | null> = [
      await node.own('broadcast-expansion', 'b-1', 60_000),
      await node.own('broadcast-expansion', 'b-2', 60_000),
      await node.own('finishing', 'b-1', 60_000),
      await node.own('finishing', node.nodeId, 60_000),
      await node.lead('retention-sweep', 60_000),
    ];
    expect(leases.every((l) => l !== null)).toBe(true);
    expect(new Set(leases.map((l) => l!.name)).size).toBe(leases.length);
  });

  it('hands a part over after its ttl, or at once when released', async () => {
    const [a, b] = ctx.nodes(2);
    const first = (await a!.own('finishing', 'node-x', 5_000))!;
    expect(await b!.own('finishing', 'node-x', 5_000)).toBeNull();
    ctx.clock.advance(5_000);
    const second = (await b!.own('finishing', 'node-x', 5_000))!;
    expect(second.generation).toBeGreaterThan(first.generation);
    expect(await first.renew()).toBe(false);
    await second.release();
    expect(await a!.own('finishing', 'node-x', 5_000)).not.toBeNull();
  });
});
