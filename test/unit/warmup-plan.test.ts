/**
 * Warm-up plans (src/domain/warmup-plan.ts) and the built-in curves (warmup-curves.ts): the
 * curves' shape, the hourly cap derived from the day's, and the day of a plan at UTC midnight.
 */
import { describe, expect, it } from 'vitest';
import { PROVIDER_LIMITS } from '../../src/domain/site-limits.js';
import { DEFAULT_WARMUP_CURVES, OTHER_SITES } from '../../src/domain/warmup-curves.js';
import { capsAt, dayOfPlan, hourlyCap, resolveWarmupPlan } from '../../src/domain/warmup-plan.js';

describe('built-in warm-up curves', () => {
  it('give every provider of the table and the other sites a curve that never decreases and ends within a month', () => {
    for (const key of [...PROVIDER_LIMITS.map((p) => p.id), OTHER_SITES]) {
      const curve = DEFAULT_WARMUP_CURVES[key];
      expect(curve, key).toBeDefined();
      expect(curve!.length, key).toBeLessThanOrEqual(30);
      curve!.forEach((n, i) => {
        expect(Number.isInteger(n) && n >= 1, `${key}[${i}]`).toBe(true);
        if (i > 0) expect(n, `${key}[${i}]`).toBeGreaterThanOrEqual(curve![i - 1]!);
      });
    }
  });

  it('start around 50 a day at Google and lower at the strict providers, every day of the month', () => {
    const google = DEFAULT_WARMUP_CURVES.google!;
    expect(google[0]).toBe(50);
    // Roughly doubling: at least 1000 times day 1 by its last day.
    expect(google[google.length - 1]! / google[0]!).toBeGreaterThanOrEqual(1000);
    for (const strict of ['microsoft', 'yahoo', 'apple', 'united-internet', 'comcast']) {
      DEFAULT_WARMUP_CURVES[strict]!.forEach((n, i) => expect(n, `${strict}[${i}]`).toBeLessThan(google[i]!));
    }
  });
});

describe('warm-up caps', () => {
  it('derive the hourly cap from the day’s: a sixth of it, at least 5, never above the day’s', () => {
    expect([1, 3, 5, 12, 50, 60, 600, 750_000].map(hourlyCap)).toEqual([1, 3, 5, 5, 9, 10, 100, 125_000]);
  });

  it('count days from the start’s UTC midnight, day 1’s caps before it, none after the curve', () => {
    const plan = resolveWarmupPlan({ start: '2025-03-01', curve: [10, 20] });
    expect(dayOfPlan(plan, Date.UTC(2025, 1, 28, 23, 59))).toBe(0);
    expect(dayOfPlan(plan, Date.UTC(2025, 2, 1))).toBe(1);
    expect(dayOfPlan(plan, Date.UTC(2025, 2, 2, 23, 59))).toBe(2);
    expect(capsAt(plan, 'google', Date.UTC(2025, 1, 20))).toEqual({ day: 1, perDay: 10, perHour: 5 });
    expect(capsAt(plan, 'google', Date.UTC(2025, 2, 2))).toEqual({ day: 2, perDay: 20, perHour: 5 });
    expect(capsAt(plan, 'google', Date.UTC(2025, 2, 3))).toBeUndefined();
    expect(plan.days).toBe(2);
  });

  it('take a site’s own curve over the plan’s, and the plan’s over the built-in one', () => {
    const plan = resolveWarmupPlan({ start: '2025-03-01', curve: [10], sites: { yahoo: [1, 2, 3] } });
    expect(plan.curveOf('yahoo')).toEqual([1, 2, 3]);
    expect(plan.curveOf('google')).toEqual([10]);
    expect(plan.curveOf(OTHER_SITES)).toEqual([10]);
    expect(plan.days).toBe(3);
    expect(resolveWarmupPlan({ start: '2025-03-01' }).curveOf('microsoft')).toBe(DEFAULT_WARMUP_CURVES.microsoft);
  });
});
