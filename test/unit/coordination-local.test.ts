/**
 * The single-node coordination (src/coordination/local.ts) beyond the port's contract: the
 * node id kept in the data folder, and today's behaviour kept exactly (the attempt budget, the
 * pacer and the keyed limits answer as the classes the components use now; wake-ups are
 * delivered before wake() returns, as the dispatchers' notify() and OutboxSignal are).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LocalCoordination } from '../../src/coordination/local.js';
import { loadNodeId, NODE_ID_FILE } from '../../src/coordination/node-id.js';
import { KeyBuckets } from '../../src/coordination/key-buckets.js';
import { Pacer, RateLimiter } from '../../src/queue/rate-limiter.js';
import { FakeClock } from '../support/fake-clock.js';

let dataDir: string;
beforeEach(() => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-coordination-unit-'));
});
afterEach(() => {
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe('node id', () => {
  it('is made once per data folder, private to the service user, and the same at every start', () => {
    const id = loadNodeId(dataDir);
    const file = path.join(dataDir, NODE_ID_FILE);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.readFileSync(file, 'utf8')).toBe(`${id}\n`);
    expect(loadNodeId(dataDir)).toBe(id);
    expect(LocalCoordination.forDataDir(dataDir).nodeId).toBe(id);
    // No temp file is left beside it.
    expect(fs.readdirSync(dataDir)).toEqual([NODE_ID_FILE]);
  });

  it('differs between data folders', () => {
    const other = fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-coordination-unit-'));
    try {
      expect(loadNodeId(other)).not.toBe(loadNodeId(dataDir));
    } finally {
      fs.rmSync(other, { recursive: true, force: true });
    }
  });

  it('creates the data folder when it is missing', () => {
    const nested = path.join(dataDir, 'new', 'data');
    const id = loadNodeId(nested);
    expect(fs.readFileSync(path.join(nested, NODE_ID_FILE), 'utf8').trim()).toBe(id);
  });

  it('keeps an id written by hand (a node named by its operator)', () => {
    fs.writeFileSync(path.join(dataDir, NODE_ID_FILE), 'mx-1.eu\n', { mode: 0o600 });
    expect(loadNodeId(dataDir)).toBe('mx-1.eu');
  });

  it('refuses a file that holds no id instead of replacing it', () => {
    const file = path.join(dataDir, NODE_ID_FILE);
    fs.writeFileSync(file, 'not an id\n');
    expect(() => loadNodeId(dataDir)).toThrow(new RegExp(`${NODE_ID_FILE} does not hold a node id`));
    expect(fs.readFileSync(file, 'utf8')).toBe('not an id\n');
  });

  it('refuses an invalid id passed in', () => {
    expect(() => new LocalCoordination({ nodeId: '' })).toThrow(/not a node id/);
    expect(() => new LocalCoordination({ nodeId: 'a b' })).toThrow(/not a node id/);
  });
});

describe('LocalCoordination keeps today’s behaviour', () => {
  it('answers the attempt budget exactly as the dispatcher’s RateLimiter on the same clock', () => {
    const clock = new FakeClock();
    const c = new LocalCoordination({ nodeId: 'n1', clock });
    const shared = c.rate('delivery-attempts', { perSecond: 49 });
    const today = new RateLimiter({ rate: 49, now: () => clock.monotonic() });
    expect([shared.rate, shared.burst]).toEqual([today.rate, today.burst]);
    for (let step = 0; step < 3_000; step++) {
      const n = today.available();
      expect([shared.available(), shared.msUntilAvailable()]).toEqual([n, today.msUntilAvailable()]);
      const take = step % 3 === 0 ? n : Math.min(n, 1);
      shared.take(take);
      today.take(take);
      clock.advance(step % 7);
    }
  });

  it('answers the pacer exactly as the dispatcher’s Pacer on the same time', () => {
    let now = 1_000;
    const c = new LocalCoordination({ nodeId: 'n1', realTime: () => now });
    const shared = c.pacer('delivery-receivers', { perSecond: 50 });
    const today = new Pacer({ rate: 50, now: () => now });
    expect(shared.effectiveRate).toBe(today.effectiveRate);
    for (let step = 0; step < 2_000; step++) {
      expect(shared.take()).toBe(today.take());
      now += step % 5;
    }
  });

  it('answers the keyed limits exactly as KeyBuckets on the same clock (the API’s limits, moved here from http/rate-limit.ts)', async () => {
    let now = 0;
    const c = new LocalCoordination({ nodeId: 'n1', realTime: () => now });
    const shared = c.keyedRate('api-keys', { limit: 5, windowMs: 1_000 });
    const today = new KeyBuckets({ limit: 5, windowMs: 1_000, now: () => now });
    for (let step = 0; step < 500; step++) {
      const key = `k${step % 3}`;
      expect(await shared.take(key)).toEqual(today.take(key));
      now += (step * 37) % 150;
    }
  });

  it('delivers a wake-up before wake() returns, in the order of subscription', () => {
    const c = new LocalCoordination({ nodeId: 'n1' });
    const calls: string[] = [];
    c.onWake('queue', () => calls.push('delivery'));
    c.onWake('queue', () => calls.push('metrics'));
    c.wake('queue');
    expect(calls).toEqual(['delivery', 'metrics']);
  });

  it('reports a listener that throws and goes on with the others', () => {
    const errors: unknown[] = [];
    const c = new LocalCoordination({ nodeId: 'n1', onListenerError: (err, topic) => errors.push([topic, (err as Error).message]) });
    let called = false;
    c.onWake('outbox', () => {
      throw new Error('bug');
    });
    c.onWake('outbox', () => (called = true));
    c.wake('outbox');
    expect(called).toBe(true);
    expect(errors).toEqual([['outbox', 'bug']]);
  });

  it('unsubscribes one subscription of a function subscribed twice', () => {
    const c = new LocalCoordination({ nodeId: 'n1' });
    let calls = 0;
    const fn = () => calls++;
    const off = c.onWake('purges', fn);
    c.onWake('purges', fn);
    off();
    c.wake('purges');
    expect(calls).toBe(1);
  });

  it('refuses a lease without a positive ttl', async () => {
    const c = new LocalCoordination({ nodeId: 'n1' });
    await expect(c.lead('retention-sweep', 0)).rejects.toThrow(/ttl must be positive/);
  });

  it('gives its leases this node’s id and never leads one task twice in the process', async () => {
    const c = new LocalCoordination({ nodeId: 'node-a', clock: new FakeClock() });
    const lease = await c.lead('channel-purge', 60_000);
    expect(lease?.owner).toBe('node-a');
    expect(await c.lead('channel-purge', 60_000)).toBeNull();
  });
});
