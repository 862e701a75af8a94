/**
 * The coordination port's contract (src/coordination/port.ts), part two: the shared limits.
 * Whatever number of nodes spend from a named budget, together they stay within it: the
 * attempt rate, the pacer's receiver slots, keyed request limits, slots per key. Written once,
 * run per implementation (coordinations.ts); time moves only through the fake clock.
 */
import { expect, it } from 'vitest';
import type { SharedPacer, SharedRate } from '../../src/coordination/port.js';
import { maxInWindow } from '../support/windows.js';
import { eachCoordination } from './coordinations.js';

eachCoordination('coordination: shared attempt rate', (ctx) => {
  /** Greedy users of one rate, each waking every stepMs: the start times of all of them. */
  function greedy(rates: SharedRate[], durationMs: number, stepMs: number, op: 'tryTake' | 'available'): number[] {
    const starts: number[] = [];
    for (let t = 0; t < durationMs; t += stepMs) {
      for (const r of rates) {
        const n = op === 'tryTake' ? r.tryTake(1_000) : r.available();
        if (op === 'available') r.take(n);
        for (let i = 0; i < n; i++) starts.push(t);
      }
      ctx.clock.advance(stepMs);
    }
    return starts;
  }

  it('never lets its users together start more than the rate in any 1-second window', () => {
    for (const op of ['tryTake', 'available'] as const) {
      const rates = ctx.nodes(3).map((n) => n.rate(`attempts-${op}`, { perSecond: 50 }));
      const starts = greedy(rates, 5_000, 7, op);
      expect(maxInWindow(starts, 1000), op).toBeLessThanOrEqual(50);
      // Still the rate over the run, not a fraction of it.
      expect(starts.length, op).toBeGreaterThanOrEqual(240);
    }
  });

  it('grants racing takers no more than the burst together', () => {
    const rates = ctx.nodes(4).map((n) => n.rate('attempts', { perSecond: 100, burst: 10 }));
    const granted = rates.map((r) => r.tryTake(8));
    expect(granted.reduce((a, b) => a + b, 0)).toBe(10);
    expect(rates.every((r) => r.available() === 0)).toBe(true);
  });

  it('says when the next start is allowed, and allows it then', () => {
    const rate = ctx.node.rate('attempts', { perSecond: 10, burst: 1 });
    expect(rate.msUntilAvailable()).toBe(0);
    expect(rate.tryTake(5)).toBe(1);
    const wait = rate.msUntilAvailable();
    expect(wait).toBeGreaterThan(0);
    ctx.clock.advance(wait - 1);
    expect(rate.available()).toBe(0);
    ctx.clock.advance(1);
    expect(rate.available()).toBe(1);
  });

  it('refuses a second definition of one name with other options', () => {
    ctx.node.rate('attempts', { perSecond: 50 });
    expect(() => ctx.node.rate('attempts', { perSecond: 50 })).not.toThrow();
    expect(() => ctx.node.rate('attempts', { perSecond: 60 })).toThrow(/other options/);
  });
});

eachCoordination('coordination: shared pacer', (ctx) => {
  it('gives its users together no more than the rate of slots in any 1-second window', () => {
    const pacers: SharedPacer[] = ctx.nodes(3).map((n) => n.pacer('receivers', { perSecond: 50 }));
    const sent: number[] = [];
    for (let t = 0; t < 5_000; t += 3) {
      for (const p of pacers) if (p.take() === 0) sent.push(t);
      ctx.clock.advance(3);
    }
    expect(maxInWindow(sent, 1000)).toBeLessThanOrEqual(50);
    expect(sent.length).toBeGreaterThanOrEqual(240);
    expect(pacers[0]!.effectiveRate).toBeLessThan(50);
  });

  it('answers the wait until the next slot without taking it', () => {
    const pacer = ctx.node.pacer('receivers', { perSecond: 10, marginMs: 0 });
    expect(pacer.take()).toBe(0);
    const wait = pacer.take();
    expect(wait).toBeGreaterThan(0);
    expect(pacer.take()).toBeCloseTo(wait, 6);
    ctx.clock.advance(Math.ceil(wait));
    expect(pacer.take()).toBe(0);
  });
});

eachCoordination('coordination: keyed limits', (ctx) => {
  it('allows exactly the limit of racing requests on one key, across nodes', async () => {
    const limits = ctx.nodes(3).map((n) => n.keyedRate('api-key', { limit: 10, windowMs: 1_000 }));
    const answers = await Promise.all(Array.from({ length: 25 }, (_, i) => limits[i % 3]!.take('key-1')));
    expect(answers.filter((a) => a.allowed)).toHaveLength(10);
    for (const refused of answers.filter((a) => !a.allowed)) {
      expect(refused).toMatchObject({ limit: 10, remaining: 0 });
      expect(refused.resetSeconds).toBeGreaterThanOrEqual(1);
    }
  });

  it('counts each key apart and gives a request back every window / limit', async () => {
    const limit = ctx.node.keyedRate('auth-failures', { limit: 2, windowMs: 1_000 });
    expect((await limit.take('10.0.0.1')).allowed).toBe(true);
    expect((await limit.take('10.0.0.1')).allowed).toBe(true);
    expect((await limit.take('10.0.0.1')).allowed).toBe(false);
    expect((await limit.take('10.0.0.2')).allowed).toBe(true);
    ctx.clock.advance(500);
    expect((await limit.take('10.0.0.1')).allowed).toBe(true);
    expect((await limit.take('10.0.0.1')).allowed).toBe(false);
  });
});

eachCoordination('coordination: failure windows', (ctx) => {
  it('blocks a key once the limit of its failures, reported on any node, lie in the window, until the oldest leaves it', async () => {
    const windows = ctx.nodes(3).map((n) => n.failures('smtp-auth-addresses', { limit: 3, windowMs: 60_000 }));
    await windows[0]!.add('192.0.2.1');
    ctx.clock.advance(10_000);
    await Promise.all([windows[1]!.add('192.0.2.1'), windows[2]!.add('192.0.2.1')]);
    for (const w of windows) expect(await w.reached('192.0.2.1')).toBe(true);
    expect(await windows[0]!.reached('192.0.2.2')).toBe(false);
    // The first failure leaves the window 60 s after it: two are left, below the limit.
    ctx.clock.advance(50_001);
    expect(await windows[1]!.reached('192.0.2.1')).toBe(false);
  });

  it('forgets a key’s failures on clear, on every node, and keeps other keys’', async () => {
    const [a, b] = ctx.nodes(2).map((n) => n.failures('smtp-auth-users', { limit: 2, windowMs: 600_000 }));
    for (const key of ['u1', 'u1', 'u2', 'u2']) await a!.add(key);
    await b!.clear('u1');
    expect(await a!.reached('u1')).toBe(false);
    expect(await a!.reached('u2')).toBe(true);
  });
});

eachCoordination('coordination: keys are any string', (ctx) => {
  // SMTP AUTH's per-user key is "address NUL user name" (smtp/throttle.ts), the name the client's.
  const keys = ['192.0.2.1\u0000ann', '192.0.2.1\u0000"ann"', '"192.0.2.1\\u0000ann"', 'ünï\u0001'];

  it('keeps failure windows of keys with NUL, quotes and other characters apart', async () => {
    const w = ctx.node.failures('auth-users', { limit: 1, windowMs: 60_000 });
    await w.add(keys[0]!);
    expect(await Promise.all(keys.map((k) => w.reached(k)))).toEqual([true, false, false, false]);
    await w.clear(keys[0]!);
    expect(await w.reached(keys[0]!)).toBe(false);
  });

  it('keeps keyed limits of such keys apart', async () => {
    const r = ctx.node.keyedRate('per-user', { limit: 1, windowMs: 60_000 });
    expect((await Promise.all(keys.map((k) => r.take(k)))).map((d) => d.allowed)).toEqual([true, true, true, true]);
    expect((await r.take(keys[0]!)).allowed).toBe(false);
  });
});

eachCoordination('coordination: slots', (ctx) => {
  it('gives no more than the limit to racing acquirers across nodes', async () => {
    const slots = ctx.nodes(4).map((n) => n.slots('mx-site'));
    const holds = await Promise.all(Array.from({ length: 20 }, (_, i) => slots[i % 4]!.acquire('mx.example', 3)));
    expect(holds.filter((h) => h !== null)).toHaveLength(3);
    expect(await slots[0]!.held('mx.example')).toBe(3);
  });

  it('frees one slot per hold released, however often it is released', async () => {
    const slots = ctx.node.slots('mx-site');
    const a = (await slots.acquire('mx.example', 2))!;
    await slots.acquire('mx.example', 2);
    expect(await slots.acquire('mx.example', 2)).toBeNull();
    await Promise.all([a.release(), a.release()]);
    expect(await slots.held('mx.example')).toBe(1);
    expect(await slots.acquire('mx.example', 2)).not.toBeNull();
    expect(await slots.acquire('mx.example', 2)).toBeNull();
  });

  it('reads the limit per call: a lowered limit refuses until enough holds are released', async () => {
    const slots = ctx.node.slots('mx-site');
    const holds = await Promise.all([1, 2, 3, 4].map(() => slots.acquire('mx.example', 4)));
    expect(await slots.acquire('mx.example', 2)).toBeNull();
    await holds[0]!.release();
    await holds[1]!.release();
    expect(await slots.acquire('mx.example', 2)).toBeNull();
    await holds[2]!.release();
    expect(await slots.acquire('mx.example', 2)).not.toBeNull();
  });

  it('counts each key and each name apart', async () => {
    const site = ctx.node.slots('mx-site');
    expect(await site.acquire('a.example', 1)).not.toBeNull();
    expect(await site.acquire('b.example', 1)).not.toBeNull();
    expect(await ctx.node.slots('other').acquire('a.example', 1)).not.toBeNull();
    expect(await site.held('c.example')).toBe(0);
  });
});

eachCoordination('coordination: counters', (ctx) => {
  const day = (cap: number) => ({ key: 'day', cap, ttlMs: 86_400_000 });
  const hour = (cap: number) => ({ key: 'hour', cap, ttlMs: 3_600_000 });

  it('gives racing adders across nodes no more than the cap together', async () => {
    const counters = ctx.nodes(4).map((n) => n.counters('warmup:ip1'));
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => counters[i % 4]!.add([day(7)])));
    expect(answers.filter((a) => a.added)).toHaveLength(7);
    expect(await counters[1]!.read()).toEqual(new Map([['day', 7]]));
  });

  it('adds to every key of a set or to none, and answers the counts', async () => {
    const c = ctx.node.counters('warmup:ip1');
    expect(await c.add([day(3), hour(1)])).toEqual({ added: true, counts: [1, 1] });
    // The hour is full: the day is not counted either.
    expect(await c.add([day(3), hour(1)])).toEqual({ added: false, counts: [1, 1] });
    expect(await c.add([day(3)])).toEqual({ added: true, counts: [2] });
    expect(await c.read()).toEqual(new Map([['day', 2], ['hour', 1]]));
  });

  it('holds the caps of overlapping sets added at once from several nodes', async () => {
    const [a, b, c] = ctx.nodes(3).map((n) => n.counters('warmup:ip1'));
    const sets = [[day(10), hour(4)], [hour(4), day(10)], [day(10)]];
    const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => [a, b, c][i % 3]!.add(sets[i % 3]!)));
    const counts = await a!.read();
    // Every set holds the day, and node c alone tries it 10 times: the day fills, and each
    // add that passed counted it once. Which adds passed depends on the order in which the
    // nodes' transactions take the row locks, so the hour holds as many adds as passed from
    // a and b, never more than its cap (4 when they come in the order sent; fewer when c's go first).
    expect(counts.get('day')).toBe(10);
    expect(answers.filter((x) => x.added)).toHaveLength(10);
    const hourAdds = answers.filter((x, i) => x.added && i % 3 !== 2).length;
    expect(counts.get('hour') ?? 0).toBe(hourAdds);
    expect(hourAdds).toBeLessThanOrEqual(4);
  });

  it('forgets a key at the end of its ttl: it reads 0 and counts from 0 again', async () => {
    const c = ctx.node.counters('warmup:ip1');
    await c.add([day(5), hour(1)]);
    ctx.clock.advance(3_600_000 - 1);
    expect((await c.add([hour(1)])).added).toBe(false);
    ctx.clock.advance(1);
    expect(await c.read()).toEqual(new Map([['day', 1]]));
    expect(await c.add([day(5), hour(1)])).toEqual({ added: true, counts: [2, 1] });
  });

  it('counts each key and each name apart, keys of any characters included', async () => {
    const keys = ['a\u0000b', 'a"b', 'ünï'];
    const c = ctx.node.counters('warmup:ip1');
    for (const key of keys) expect((await c.add([{ key, cap: 1, ttlMs: 60_000 }])).added).toBe(true);
    expect((await ctx.node.counters('warmup:ip2').add([{ key: keys[0]!, cap: 1, ttlMs: 60_000 }])).added).toBe(true);
    expect(await c.read()).toEqual(new Map(keys.map((k) => [k, 1])));
  });

  it('refuses a set that names a key twice', async () => {
    await expect(ctx.node.counters('warmup:ip1').add([day(3), day(3)])).rejects.toThrow(/twice/);
  });
});
