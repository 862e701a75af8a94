/**
 * Time for the scheduler, injectable so tests run retry schedules and rate limits on a fake
 * clock. Real timers are unref()'d (Haraka does the same): a sleeping dispatcher never keeps
 * the process alive; the daemon's servers do.
 *
 * Two readings, because the wall clock can be stepped (NTP correcting a clock that was off, an
 * operator's `date -s`, a VM resumed from a snapshot) while work is under way:
 *  - now(): scheduler time, for what is stored and compared with stored times (due times,
 *    leases, retries). It follows the wall clock forward but never goes back (steadyTime).
 *  - monotonic(): for intervals (rate limits, throttles, deadlines, cache ages), which a step
 *    of the wall clock must neither stretch nor shrink. Timers (setTimeout) run on it too.
 */
export interface Timer {
  cancel(): void;
}

export interface Clock {
  /** Scheduler time: milliseconds since the epoch, never less than an earlier reading. */
  now(): number;
  /** Milliseconds from a monotonic clock with an arbitrary origin: only differences mean anything. */
  monotonic(): number;
  /**
   * The wall clock as it reads now, steps and all: for a timestamp another party compares with
   * its own clock (a webhook signature's `t=`, which receivers accept within a few minutes of
   * theirs). now() may run ahead of it for a while after a step back, and would then be refused.
   */
  wall(): number;
  /** Calls fn once after ms milliseconds (of monotonic time). */
  setTimer(fn: () => void, ms: number): Timer;
}

export interface TimeSources {
  /** Milliseconds since the epoch; may jump either way. */
  wall: () => number;
  /** Milliseconds that only ever move forward, at the wall clock's rate between steps. */
  monotonic: () => number;
}

/**
 * Scheduler time over a wall clock that may step: never below the wall clock nor below its own
 * last reading, and moved on by the monotonic time elapsed since that reading.
 *
 * A step forward is followed at once: leases run out by their stored time, and the
 * dispatcher's lease recovery spares the leases of its own attempts in flight (`keep` in
 * dispatcher.ts), so a forward step expires only leases that nobody holds any more.
 *
 * A step back freezes nothing: the reading goes on from where it was, so jobs that were due
 * stay due, a retry comes after its delay, and anything written with the (earlier) wall time,
 * such as a new message's due time, is due at once. As both clocks then tick at the same rate
 * the wall clock would never catch up, and the times we write (due times, attempt events)
 * would stay ahead of the others' for as long as the process runs; so while ahead, the reading
 * moves at half the monotonic rate (as NTP slews a clock rather than stepping it), and the gap
 * is closed after twice the step. Delays are up to twice as long meanwhile; the rate limits,
 * the pacer and the timeouts run on monotonic time and keep their speed.
 *
 * Across a restart inside that catch-up window the new process starts from the wall clock
 * again: due times and retries that the previous process wrote ahead of it wait until the wall
 * clock reaches them (at most the step), while leases are all recovered as due at start and
 * new messages go out as usual. Nothing is lost or sent twice; only those waits are longer.
 *
 * Readings are whole milliseconds (they become ISO timestamps and index keys); the fraction of
 * the monotonic clock is kept, so the reading does not fall behind by rounding.
 */
export function steadyTime(src: TimeSources): () => number {
  let last = src.wall();
  let lastMono = src.monotonic();
  /** Whether the last reading was ahead of the wall clock: the time since moves at half speed. */
  let ahead = false;
  return () => {
    const mono = src.monotonic();
    const wall = src.wall();
    const elapsed = mono - lastMono;
    last = Math.max(wall, last + (ahead ? elapsed / 2 : elapsed));
    lastMono = mono;
    ahead = last > wall;
    return Math.floor(last);
  };
}

/** The process's clock: Date.now and performance.now (CLOCK_MONOTONIC on Linux) unless given. */
export function systemClock(src: Partial<TimeSources> = {}): Clock {
  const monotonic = src.monotonic ?? (() => performance.now());
  const wall = src.wall ?? (() => Date.now());
  const now = steadyTime({ wall, monotonic });
  return {
    now,
    monotonic,
    wall,
    setTimer(fn, ms) {
      // setTimeout's limit is 2^31-1 ms; a longer sleep wakes early and re-plans, which is harmless.
      const handle = setTimeout(fn, Math.min(Math.max(0, ms), 2_147_483_647));
      handle.unref();
      return { cancel: () => clearTimeout(handle) };
    },
  };
}
