/**
 * Time for the scheduler, injectable so tests run retry schedules and rate limits on a fake
 * clock. Real timers are unref()'d (Haraka does the same): a sleeping dispatcher never keeps
 * the process alive; the daemon's servers do.
 */
export interface Timer {
  cancel(): void;
}

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Calls fn once after ms milliseconds. */
  setTimer(fn: () => void, ms: number): Timer;
}

export function systemClock(): Clock {
  return {
    now: () => Date.now(),
    setTimer(fn, ms) {
      // setTimeout's limit is 2^31-1 ms; a longer sleep wakes early and re-plans, which is harmless.
      const handle = setTimeout(fn, Math.min(Math.max(0, ms), 2_147_483_647));
      handle.unref();
      return { cancel: () => clearTimeout(handle) };
    },
  };
}
