import { afterEach, describe, expect, it, vi } from 'vitest';
import { KeyBuckets } from '../../src/coordination/key-buckets.js';

/** A limiter on a hand-moved clock. */
function limiter(limit: number, windowMs: number) {
  const clock = { now: 1_000_000 };
  const l = new KeyBuckets({ limit, windowMs, now: () => clock.now });
  return { l, clock, advance: (ms: number) => (clock.now += ms) };
}

describe('KeyBuckets (the API’s per-key limits)', () => {
  it('allows `limit` requests at once and counts the remaining ones down', () => {
    const { l } = limiter(3, 3000);
    expect(l.take('k')).toEqual({ allowed: true, limit: 3, remaining: 2, resetSeconds: 1 });
    expect(l.take('k')).toEqual({ allowed: true, limit: 3, remaining: 1, resetSeconds: 2 });
    expect(l.take('k')).toEqual({ allowed: true, limit: 3, remaining: 0, resetSeconds: 3 });
  });

  it('refuses the request after the limit and says when the next one is allowed', () => {
    const { l } = limiter(3, 60_000);
    for (let i = 0; i < 3; i++) expect(l.take('k').allowed).toBe(true);
    // One request refills every 20 s.
    expect(l.take('k')).toEqual({ allowed: false, limit: 3, remaining: 0, resetSeconds: 20 });
    expect(l.take('k').allowed).toBe(false);
  });

  it('allows one more request once the refill time has passed, and not before', () => {
    const { l, advance } = limiter(3, 3000);
    for (let i = 0; i < 3; i++) l.take('k');
    advance(999);
    const early = l.take('k');
    expect(early.allowed).toBe(false);
    expect(early.resetSeconds).toBe(1);
    advance(1);
    expect(l.take('k')).toMatchObject({ allowed: true, remaining: 0 });
    expect(l.take('k').allowed).toBe(false);
  });

  it('does not count refused requests against the bucket', () => {
    const { l, advance } = limiter(2, 2000);
    l.take('k');
    l.take('k');
    for (let i = 0; i < 10; i++) expect(l.take('k').allowed).toBe(false);
    advance(1000);
    expect(l.take('k').allowed).toBe(true);
  });

  it('refills to at most `limit` however long the key was idle', () => {
    const { l, advance } = limiter(3, 3000);
    l.take('k');
    advance(24 * 3_600_000);
    expect(l.take('k')).toEqual({ allowed: true, limit: 3, remaining: 2, resetSeconds: 1 });
    expect(l.take('k').allowed).toBe(true);
    expect(l.take('k').allowed).toBe(true);
    expect(l.take('k').allowed).toBe(false);
  });

  it('keeps a separate bucket per key', () => {
    const { l } = limiter(1, 1000);
    expect(l.take('a').allowed).toBe(true);
    expect(l.take('a').allowed).toBe(false);
    expect(l.take('b').allowed).toBe(true);
  });

  it('reports a partly refilled bucket with the remaining count rounded down', () => {
    const { l, advance } = limiter(10, 10_000);
    for (let i = 0; i < 10; i++) l.take('k');
    advance(2500); // 2.5 requests back
    const d = l.take('k');
    expect(d).toMatchObject({ allowed: true, remaining: 1 });
    // 8.5 requests missing at one per second: full again in 9 s.
    expect(d.resetSeconds).toBe(9);
  });

  it('never reports a reset of less than one second', () => {
    const { l } = limiter(1000, 1000);
    expect(l.take('k').resetSeconds).toBe(1);
  });

  it('keeps the state of a drained key when it prunes the buckets of many other keys', () => {
    const { l, advance } = limiter(2, 60_000);
    l.take('drained');
    l.take('drained');
    for (let i = 0; i < 10_050; i++) l.take(`other-${i}`);
    advance(1);
    expect(l.take('drained').allowed).toBe(false);
    // A key pruned because its bucket refilled is as good as new.
    advance(60_000);
    expect(l.take('other-0')).toMatchObject({ allowed: true, remaining: 1 });
  });

  it('does not sink a bucket used before its clock stepped back', () => {
    const { l, clock } = limiter(100, 60_000);
    for (let i = 0; i < 10; i++) l.take('k');
    clock.now -= 3_600_000;
    // Before: the hour counted as -6,000 requests, refused for an hour (Retry-After: 3536).
    expect(l.take('k')).toMatchObject({ allowed: true, remaining: 89 });
  });
});

describe('KeyBuckets on its default clock', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('measures on monotonic time: a key used before a step of the wall clock is served after it', () => {
    // Only Date is faked: the wall clock steps, performance.now does not.
    vi.useFakeTimers({ toFake: ['Date'] });
    const l = new KeyBuckets({ limit: 3, windowMs: 60_000 });
    l.take('k');
    vi.setSystemTime(Date.now() - 3_600_000);
    expect(l.take('k')).toMatchObject({ allowed: true, remaining: 1 });
    // Nor does a step forward refill a drained bucket.
    l.take('k');
    vi.setSystemTime(Date.now() + 7_200_000);
    expect(l.take('k').allowed).toBe(false);
  });
});
