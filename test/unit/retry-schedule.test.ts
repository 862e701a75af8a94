import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/load.js';
import { parseDuration } from '../../src/domain/duration.js';
import { nextAttemptAt, nextDelay, parseRetrySchedule } from '../../src/domain/retry.js';

const M = 60_000;
const H = 60 * M;

describe('parseRetrySchedule', () => {
  it('reads the default schedule and repeats its last step for ever', () => {
    const s = parseRetrySchedule('5m,10m,30m,1h,2h,4h*');
    expect(s.steps).toEqual([5 * M, 10 * M, 30 * M, H, 2 * H, 4 * H]);
    expect(s.repeatLast).toBe(true);
    expect([1, 2, 3, 6, 7, 50].map((a) => nextDelay(s, a))).toEqual([5 * M, 10 * M, 30 * M, 4 * H, 4 * H, 4 * H]);
  });

  it('expands a Haraka-style repeat count and ends the schedule without a trailing star', () => {
    const s = parseRetrySchedule('5m, 15m, 1h*3');
    expect(s.steps).toEqual([5 * M, 15 * M, H, H, H]);
    expect(nextDelay(s, 5)).toBe(H);
    expect(nextDelay(s, 6)).toBeUndefined();
  });

  it.each([
    ['', /empty/],
    ['5m,,1h', /step 2 ""/],
    ['5m,soon,1h', /step 2 "soon" is not a duration/],
    ['5m*,1h', /step 1 "5m\*": only the last step may repeat/],
    ['5m,1h*0', /step 2 "1h\*0": the repeat count/],
    ['0s', /step 1 "0s" must be longer than 0/],
    ['1m**', /step 1 "1m\*\*"/],
  ])('refuses %j with an error naming the bad step', (text, message) => {
    expect(() => parseRetrySchedule(text)).toThrow(message);
  });
});

describe('long runs of white space in durations and steps (issue 29)', () => {
  // The expressions these replaced were quadratic in such runs; their time at a megabyte is
  // test/worst-case/regex.worst.ts's business, the results are checked here.
  const blanks = ' \t'.repeat(5_000);

  it('reads a duration with white space around it and between the number and the unit', () => {
    expect(parseDuration(`${blanks}5m${blanks}`)).toBe(5 * M);
    expect(parseDuration(`1.5${blanks}h`)).toBe(1.5 * H);
    expect(() => parseDuration(`0${blanks}0`)).toThrow(/is not a duration/);
    expect(() => parseDuration(`5${blanks}m${blanks}x`)).toThrow(/is not a duration/);
  });

  it('reads a step with white space before and after its star, and names a step that is no duration', () => {
    expect(parseRetrySchedule(`5m${blanks}*${blanks}3`).steps).toEqual([5 * M, 5 * M, 5 * M]);
    expect(parseRetrySchedule(`1m, 5m${blanks}*`).repeatLast).toBe(true);
    expect(() => parseRetrySchedule(`0${blanks}\t0`)).toThrow(/step 1 .* is not a duration/);
    expect(() => parseRetrySchedule(`5m${blanks}*${blanks}*`)).toThrow(/is not "<duration>", "<duration>\*" or "<duration>\*<count>"/);
  });
});

describe('nextAttemptAt', () => {
  const schedule = parseRetrySchedule('5m,1h*');
  const createdAtMs = 1_000_000;

  it('schedules the next attempt after the step of the failed attempt', () => {
    expect(nextAttemptAt({ schedule, attempt: 1, nowMs: createdAtMs, createdAtMs, maxAgeMs: 24 * H })).toBe(createdAtMs + 5 * M);
  });

  it('moves a retry that would land after the maximum age to the expiry time', () => {
    const nowMs = createdAtMs + 23.5 * H;
    expect(nextAttemptAt({ schedule, attempt: 9, nowMs, createdAtMs, maxAgeMs: 24 * H })).toBe(createdAtMs + 24 * H);
  });

  it('gives up once the message is older than the maximum age', () => {
    expect(nextAttemptAt({ schedule, attempt: 9, nowMs: createdAtMs + 24 * H, createdAtMs, maxAgeMs: 24 * H })).toBeUndefined();
  });
});

describe('delivery.retrySchedule in the configuration', () => {
  it('stops the start with a ConfigError that names the bad step', () => {
    let error: unknown;
    try {
      loadConfig({ env: { POSTRIDER_DELIVERY_RETRY_SCHEDULE: '5m,often,1h' } });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toMatch(/delivery\.retrySchedule.*step 2 "often"/);
  });

  it('accepts a valid schedule from a config override', () => {
    expect(loadConfig({ env: {}, overrides: { 'delivery.retrySchedule': '1m,5m*2,1h*' } }).delivery.retrySchedule).toBe('1m,5m*2,1h*');
  });
});
