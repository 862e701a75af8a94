/**
 * The PostgreSQL coordination's shared limits (coordination/postgres/) beyond the contract:
 * three nodes spending one attempt budget in every way delivery may (blocks reserved and spent
 * later, in part, or given back; racing tryTakes) never pass it in any window; a rate call
 * that the database does not answer in time grants nothing and the rate recovers; slot holds
 * of a node that stopped renewing expire while a live node's are renewed; stop() gives back
 * leases and holds at once; the janitor drops rows that mean nothing any more. Time moves by
 * the fake clock; no assertion depends on how fast anything runs.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { HOLD_MS } from '../../src/coordination/postgres/rates.js';
import { HOLD_TTL_MS, OWED_RETRY_MS } from '../../src/coordination/postgres/slots.js';
import { JANITOR_EVERY_MS } from '../../src/coordination/postgres/janitor.js';
import type { SharedRate } from '../../src/coordination/port.js';
import { PACER_MARGIN_MS } from '../../src/queue/rate-limiter.js';
import { FakeClock } from '../support/fake-clock.js';
import { PgCluster } from '../support/pg-coordination.js';
import { startTcpProxy } from '../support/tcp-proxy.js';
import { waitFor } from '../support/wait.js';
import { maxInWindow } from '../support/windows.js';

/** A small deterministic PRNG (the run is the same every time). */
function prng(seed: number): () => number {
  let s = seed;
  return () => (s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
}

/** Most starts in any interval [t_i, t_j] beyond what a bucket of `burst` refilled at `rate` allows (≤ 0: within it). */
function worstBucketExcess(starts: readonly number[], rate: number, burst: number): number {
  let worst = -Infinity;
  for (let i = 0; i < starts.length; i++) {
    for (let j = i; j < starts.length; j++) worst = Math.max(worst, j - i + 1 - burst - (rate * (starts[j]! - starts[i]!)) / 1000);
  }
  return worst;
}

interface Planned {
  rate: SharedRate;
  n: number;
  at: number;
}

describe('PostgreSQL coordination: shared limits', () => {
  let cluster: PgCluster;
  beforeEach(() => {
    cluster = new PgCluster();
  });
  afterEach(async () => {
    await cluster.dispose();
  });

  it('keeps three nodes within one attempt budget however they spend it (blocks, partial takes, returns, tryTake)', async () => {
    const clock = new FakeClock();
    const schema = cluster.freshSchema();
    const nodes = [await cluster.node(schema, clock), await cluster.node(schema, clock), await cluster.node(schema, clock)];
    const rates = nodes.map((n) => n.rate('attempts', { perSecond: 40, burst: 6 }));
    const rnd = prng(7);
    const starts: number[] = [];
    const planned: Planned[] = [];
    const start = clock.monotonic();
    while (clock.monotonic() - start < 8_000) {
      const now = clock.monotonic();
      for (const p of planned.filter((x) => x.at <= now)) {
        p.rate.take(p.n);
        for (let i = 0; i < p.n; i++) starts.push(now);
        planned.splice(planned.indexOf(p), 1);
      }
      for (const rate of rates) {
        if (planned.some((p) => p.rate === rate)) continue; // between its available() and its take()
        const pick = rnd();
        if (pick < 0.35) {
          const n = rate.tryTake(1 + Math.floor(rnd() * 4));
          for (let i = 0; i < n; i++) starts.push(now);
        } else if (pick < 0.75) {
          // available(), then a lease that takes a while, then take() of what was started (maybe less).
          const n = Math.floor(rnd() * (rate.available() + 1));
          planned.push({ rate, n, at: now + Math.floor(rnd() * Math.min(120, HOLD_MS - 1)) });
        } else if (pick < 0.85) rate.msUntilAvailable();
      }
      clock.advance(1 + Math.floor(rnd() * 25));
    }
    starts.sort((a, b) => a - b);
    expect(maxInWindow(starts, 1000)).toBeLessThanOrEqual(40);
    expect(worstBucketExcess(starts, 40, 6)).toBeLessThanOrEqual(1e-9);
    // Not safe by granting nothing: most of the budget was used (8 s at 40/s).
    expect(starts.length).toBeGreaterThan(200);
  });

  it('spaces the slots of three nodes polling at random as one Pacer spaces them', async () => {
    const clock = new FakeClock();
    const schema = cluster.freshSchema();
    const nodes = [await cluster.node(schema, clock), await cluster.node(schema, clock), await cluster.node(schema, clock)];
    const pacers = nodes.map((n) => n.pacer('receivers', { perSecond: 20 }));
    const rnd = prng(11);
    const sent: number[] = [];
    const start = clock.monotonic();
    while (clock.monotonic() - start < 6_000) {
      for (const p of pacers) if (rnd() < 0.7 && p.take() === 0) sent.push(clock.monotonic());
      clock.advance(1 + Math.floor(rnd() * 15));
    }
    expect(maxInWindow(sent, 1000)).toBeLessThanOrEqual(20);
    // queue/rate-limiter.ts: any rate + 1 slots span 1000 ms + the margin less the tolerance (5).
    for (let i = 0; i + 20 < sent.length; i++) expect(sent[i + 20]! - sent[i]!).toBeGreaterThanOrEqual(1000 + PACER_MARGIN_MS - 5);
    expect(sent.length).toBeGreaterThan(100);
  });

  it('keeps every 1-second window within a high rate when the pacer hands out slots taken together (STASH_MS)', async () => {
    const clock = new FakeClock();
    const schema = cluster.freshSchema();
    const nodes = [await cluster.node(schema, clock), await cluster.node(schema, clock), await cluster.node(schema, clock)];
    const rate = 2000;
    const pacers = nodes.map((n) => n.pacer('receivers', { perSecond: rate }));
    const rnd = prng(5);
    const sent: number[] = [];
    const start = clock.monotonic();
    // Each node sends at most one message per look, looking every 0-0.5 ms: slots taken
    // together are used over the next looks, up to STASH_MS after they were taken, or dropped.
    while (clock.monotonic() - start < 3_000) {
      for (const p of pacers) if (rnd() < 0.9 && p.take() === 0) sent.push(clock.monotonic());
      clock.advance(rnd() * 0.5);
    }
    expect(maxInWindow(sent, 1000)).toBeLessThanOrEqual(rate);
    for (let i = 0; i + rate < sent.length; i++) expect(sent[i + rate]! - sent[i]!).toBeGreaterThan(1000);
    // Not safe by granting little: most of the budget was used.
    expect(sent.length).toBeGreaterThan(0.8 * 3 * pacers[0]!.effectiveRate);
  });

  it('grants nothing while the database does not answer in time, and grants again once it does', async () => {
    const clock = new FakeClock();
    const schema = cluster.freshSchema();
    const node = await cluster.node(schema, clock, { syncTimeoutMs: 200 });
    const rate = node.rate('attempts', { perSecond: 10, burst: 2 });
    expect(rate.tryTake(1)).toBe(1);
    await cluster.admin.begin(async (tx) => {
      // The budget's row locked by another transaction: the node's call waits for it, past its timeout.
      await tx.unsafe(`SELECT 1 FROM "${schema}".coord_rates WHERE name = 'attempts' FOR UPDATE`);
      expect(rate.tryTake(1)).toBe(0);
      expect(rate.available()).toBe(0);
      expect(rate.msUntilAvailable()).toBeGreaterThan(0);
    });
    await vi.waitFor(
      () => {
        clock.advance(100);
        expect(rate.tryTake(1)).toBe(1);
      },
      { timeout: 10_000, interval: 20 },
    );
  });

  it('lets the holds of a node that stopped renewing expire, and keeps a renewing node’s', async () => {
    const schema = cluster.freshSchema();
    const [clockA, clockB] = [new FakeClock(), new FakeClock()];
    // a's clock never moves: its renewals never run, as a crashed node's.
    const a = await cluster.node(schema, clockA);
    const b = await cluster.node(schema, clockB);
    expect(await a.slots('mx-site').acquire('mx.example', 1)).not.toBeNull();
    expect(await b.slots('mx-site').acquire('mx.example', 1)).toBeNull();
    clockB.advance(HOLD_TTL_MS);
    expect(await b.slots('mx-site').held('mx.example')).toBe(0);
    expect(await b.slots('mx-site').acquire('mx.example', 1)).not.toBeNull();

    const clock = new FakeClock();
    const schema2 = cluster.freshSchema();
    const [c, d] = [await cluster.node(schema2, clock), await cluster.node(schema2, clock)];
    expect(await c.slots('mx-site').acquire('mx.example', 1)).not.toBeNull();
    for (let i = 0; i < 9; i++) {
      clock.advance(HOLD_TTL_MS / 3);
      await c.settled();
    }
    expect(await d.slots('mx-site').held('mx.example')).toBe(1);
    expect(await d.slots('mx-site').acquire('mx.example', 1)).toBeNull();
  });

  it('gives back a hold whose release, or whose acquire’s answer, was lost to a cut connection as soon as the database answers, not at its ttl', async () => {
    // Real time here: the owed holds are tried again every OWED_RETRY_MS (1 s) and the wait
    // below ends long before HOLD_TTL_MS (60 s), so no hold can free itself by expiring.
    expect(HOLD_TTL_MS).toBeGreaterThan(30_000);
    const schema = cluster.freshSchema();
    const url = new URL(cluster.url);
    const proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port) });
    try {
      url.port = String(proxy.port);
      const a = await cluster.node(schema, undefined, { url: url.toString() });
      const b = await cluster.node(schema);
      const held = () => b.slots('mx-site').held('mx.example');
      const givenBack = (what: string) => waitFor(async () => (await held()) === 0, { what, timeout: 10 * OWED_RETRY_MS });

      const hold = await a.slots('mx-site').acquire('mx.example', 1);
      expect(hold).not.toBeNull();
      proxy.cut();
      await expect(hold!.release()).rejects.toThrow();
      expect(await held()).toBe(1);
      proxy.restore();
      await givenBack('the hold whose release failed to be given back');

      // The INSERT reaches the server and commits; its answer never comes back to a. (a's
      // connection is open and has the statement prepared first, or the answers to its startup
      // or to the statement's Parse would be swallowed instead, and nothing would run.)
      await (await a.slots('mx-site').acquire('mx.example', 1))!.release();
      proxy.swallowReplies();
      const lost = a.slots('mx-site').acquire('mx.example', 1);
      lost.catch(() => undefined); // awaited below, after the cut
      await waitFor(async () => (await held()) === 1, { what: 'the acquire to commit' });
      proxy.cut();
      await expect(lost).rejects.toThrow();
      proxy.restore();
      await givenBack('the hold of the unanswered acquire to be given back');
      expect(await b.slots('mx-site').acquire('mx.example', 1)).not.toBeNull();
    } finally {
      await proxy.close();
    }
  });

  it('gives back its leases and slot holds at stop(), so another node has them at once', async () => {
    const clock = new FakeClock();
    const schema = cluster.freshSchema();
    const [a, b] = [await cluster.node(schema, clock), await cluster.node(schema, clock)];
    const lease = (await a.lead('retention-sweep', 60_000))!;
    expect(await a.own('finishing', a.nodeId, 60_000)).not.toBeNull();
    expect(await a.slots('mx-site').acquire('mx.example', 1)).not.toBeNull();
    await a.stop();
    const next = await b.lead('retention-sweep', 60_000);
    expect(next!.generation).toBeGreaterThan(lease.generation);
    expect(await b.own('finishing', a.nodeId, 60_000)).not.toBeNull();
    expect(await b.slots('mx-site').acquire('mx.example', 1)).not.toBeNull();
  });

  it('drops the counters whose window ended, and keeps the others', async () => {
    const clock = new FakeClock();
    const schema = cluster.freshSchema();
    const node = await cluster.node(schema, clock);
    await node.counters('warmup:ip1').add([
      { key: 'hour', cap: 5, ttlMs: JANITOR_EVERY_MS / 2 },
      { key: 'day', cap: 50, ttlMs: 4 * JANITOR_EVERY_MS },
    ]);
    const keys = async () => (await cluster.admin.unsafe<{ key: string }[]>(`SELECT key FROM "${schema}".coord_counters ORDER BY key`)).map((r) => JSON.parse(r.key) as string);
    expect(await keys()).toEqual(['day', 'hour']);
    clock.advance(JANITOR_EVERY_MS);
    await node.settled();
    expect(await keys()).toEqual(['day']);
  });

  it('drops the rows that mean nothing any more: full buckets, past failures, expired holds, leases long expired', async () => {
    const clock = new FakeClock();
    const schema = cluster.freshSchema();
    const node = await cluster.node(schema, clock);
    await node.keyedRate('api-keys', { limit: 5, windowMs: 1_000 }).take('k1');
    await node.failures('smtp-auth-addresses', { limit: 3, windowMs: 60_000 }).add('192.0.2.1');
    await (await node.slots('mx-site').acquire('mx.example', 2))!.release();
    await node.lead('domain-recheck', 1_000);
    const count = async (table: string) => (await cluster.admin.unsafe<{ n: number }[]>(`SELECT count(*)::int4 AS n FROM "${schema}".${table}`))[0]!.n;
    const tables = ['coord_key_buckets', 'coord_failures', 'coord_slots', 'coord_leases'];
    expect(await Promise.all(tables.map(count))).toEqual([1, 1, 1, 1]);
    clock.advance(JANITOR_EVERY_MS);
    await node.settled();
    // The lease is kept a while after it expired (a late renewal still finds it).
    expect(await Promise.all(tables.map(count))).toEqual([0, 0, 0, 1]);
    clock.advance(12 * JANITOR_EVERY_MS);
    await node.settled();
    expect(await Promise.all(tables.map(count))).toEqual([0, 0, 0, 0]);
  });

  it('drops expiring entries past their end, and keeps the live ones', async () => {
    const clock = new FakeClock();
    const schema = cluster.freshSchema();
    const node = await cluster.node(schema, clock);
    // The janitor compares with the coordination's now: the fake clock's monotonic reading here.
    const now = clock.monotonic();
    await node.entries('shaping').set('ends', 'v', now + 1_000);
    await node.entries('shaping').set('lasts', 'v', now + 100 * JANITOR_EVERY_MS);
    clock.advance(JANITOR_EVERY_MS);
    await node.settled();
    const rows = await cluster.admin.unsafe<{ key: string }[]>(`SELECT key FROM "${schema}".coord_entries`);
    expect(rows.map((r) => r.key)).toEqual(['lasts']);
  });
});
