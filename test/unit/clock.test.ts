/**
 * The scheduler's clock when the wall clock is stepped (NTP, `date -s`): due times and leases
 * are compared with now(), which must neither stall behind a step back nor miss a step forward.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { steadyTime, systemClock } from '../../src/queue/clock.js';

const HOUR = 3_600_000;

/** A wall clock and a monotonic clock moved by hand. */
function sources() {
  const s = { wall: 1_750_000_000_000, mono: 5_000 };
  return {
    s,
    src: { wall: () => s.wall, monotonic: () => s.mono },
    pass: (ms: number) => {
      s.wall += ms;
      s.mono += ms;
    },
  };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('scheduler time (steadyTime)', () => {
  it('reads the wall clock while it runs normally', () => {
    const { s, src, pass } = sources();
    const now = steadyTime(src);
    expect(now()).toBe(s.wall);
    pass(1234);
    expect(now()).toBe(s.wall);
  });

  it('goes on from where it was after a step back, at half speed until the wall clock has caught up', () => {
    const { s, src, pass } = sources();
    const now = steadyTime(src);
    const before = now();
    s.wall -= HOUR;
    expect(now()).toBe(before);
    pass(1000);
    expect(now()).toBe(before + 500);
    // Never back, never stalled: every reading of the catch-up is later than the one before.
    let last = now();
    for (let i = 0; i < 100; i++) {
      pass(HOUR / 50);
      const t = now();
      expect(t).toBeGreaterThan(last);
      last = t;
    }
    // Two hours after the step (the gap closes at half the rate) the wall clock leads again.
    expect(now()).toBe(s.wall);
    pass(1000);
    expect(now()).toBe(s.wall);
  });

  it('follows a step forward at once', () => {
    const { s, src } = sources();
    const now = steadyTime(src);
    now();
    s.wall += 2 * HOUR;
    expect(now()).toBe(s.wall);
  });

  it('keeps the fractions of monotonic time, so many readings in a catch-up do not fall behind', () => {
    const { s, src } = sources();
    const now = steadyTime(src);
    const before = now();
    s.wall -= HOUR;
    for (let i = 0; i < 1600; i++) {
      s.mono += 0.25;
      now();
    }
    expect(now()).toBe(before + 200);
  });
});

describe('systemClock', () => {
  it('does not go back when the wall clock (Date.now) is stepped back', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const clock = systemClock();
    const before = clock.now();
    vi.setSystemTime(before - HOUR);
    expect(clock.now()).toBeGreaterThanOrEqual(before);
    // monotonic() is not the wall clock: the step does not show in it.
    const m = clock.monotonic();
    vi.setSystemTime(before - 2 * HOUR);
    expect(clock.monotonic()).toBeGreaterThanOrEqual(m);
  });

  it('follows a step forward of the wall clock', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const clock = systemClock();
    const stepped = clock.now() + 2 * HOUR;
    vi.setSystemTime(stepped);
    expect(clock.now()).toBeGreaterThanOrEqual(stepped);
  });
});
