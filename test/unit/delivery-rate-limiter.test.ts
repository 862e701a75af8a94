import { describe, expect, it } from 'vitest';
import { RateLimiter } from '../../src/queue/rate-limiter.js';

/** Most starts in any window [t, t + width) over the recorded start times. */
function maxInWindow(starts: number[], width: number): number {
  let max = 0;
  let lo = 0;
  for (let hi = 0; hi < starts.length; hi++) {
    while (starts[hi] - starts[lo] >= width) lo++;
    max = Math.max(max, hi - lo + 1);
  }
  return max;
}

/** A greedy dispatcher on a fake clock: wakes every `stepMs` and starts all it may. */
function run(rate: number, durationMs: number, stepMs: number, burst?: number): number[] {
  let now = 0;
  const limiter = new RateLimiter({ rate, burst, now: () => now });
  const starts: number[] = [];
  for (now = 0; now < durationMs; now += stepMs) {
    const n = limiter.available();
    limiter.take(n);
    for (let i = 0; i < n; i++) starts.push(now);
  }
  return starts;
}

describe('RateLimiter', () => {
  it('never starts more than the rate in any 1-second window', () => {
    for (const [rate, step] of [
      [50, 1],
      [50, 7],
      [50, 350],
      [20, 1],
      [1, 1],
      [1000, 3],
    ]) {
      const starts = run(rate, 10_000, step);
      expect(maxInWindow(starts, 1000), `rate ${rate}, wake-ups every ${step} ms`).toBeLessThanOrEqual(rate);
    }
  });

  it('reaches the configured rate over a longer run', () => {
    const starts = run(50, 10_000, 1);
    expect(starts.length).toBeGreaterThanOrEqual(490);
    expect(starts.length).toBeLessThanOrEqual(500);
  });

  it('spreads starts over the second instead of sending a whole second at once', () => {
    const starts = run(50, 5_000, 1);
    // Bucket of 5 (a tenth of the rate) + 5 refilled in 100 ms.
    expect(maxInWindow(starts, 100)).toBeLessThanOrEqual(10);
  });

  it('says how long to wait when nothing may start', () => {
    let now = 0;
    const limiter = new RateLimiter({ rate: 10, burst: 1, now: () => now });
    limiter.take(limiter.available());
    expect(limiter.available()).toBe(0);
    const wait = limiter.msUntilAvailable();
    expect(wait).toBe(100);
    now += wait;
    expect(limiter.available()).toBe(1);
  });

  it('waits for the sliding window when the bucket is larger than the rate allows', () => {
    let now = 0;
    const limiter = new RateLimiter({ rate: 5, burst: 5, now: () => now });
    limiter.take(5);
    now = 999;
    expect(limiter.available()).toBe(0);
    expect(limiter.msUntilAvailable()).toBe(1);
    now = 1000;
    expect(limiter.available()).toBe(5);
  });
});
