/**
 * A manual clock for the dispatcher: time moves only when a test calls advance() (or sets `ms`,
 * which moves the wall clock and monotonic time together, as time passing does). stepWall()
 * steps the wall clock alone, as NTP or `date -s` would: now() then behaves as the real clock's
 * scheduler time does (steadyTime), and monotonic time and timers are not moved.
 */
import { steadyTime, type Clock, type Timer } from '../../src/queue/clock.js';

interface Pending {
  /** Monotonic time at which it fires. */
  at: number;
  seq: number;
  fn: () => void;
}

export class FakeClock implements Clock {
  private pending: Pending[] = [];
  private seq = 0;
  /** The sum of wall clock steps: monotonic() is ms less this. */
  private stepped = 0;
  private readonly steady: () => number;

  /** The wall clock's reading. */
  public ms: number;

  constructor(ms: number = Date.UTC(2025, 0, 6, 9, 0, 0)) {
    this.ms = ms;
    this.steady = steadyTime({ wall: () => this.ms, monotonic: () => this.monotonic() });
  }

  now(): number {
    return this.steady();
  }

  monotonic(): number {
    return this.ms - this.stepped;
  }

  wall(): number {
    return this.ms;
  }

  /** Steps the wall clock by ms (negative: back) without time passing. */
  stepWall(ms: number): void {
    this.ms += ms;
    this.stepped += ms;
  }

  setTimer(fn: () => void, ms: number): Timer {
    if (ms <= 0) {
      // Already due: fire soon, as a real timer would, without waiting for advance().
      const handle = setImmediate(fn);
      return { cancel: () => clearImmediate(handle) };
    }
    const entry = { at: this.monotonic() + ms, seq: this.seq++, fn };
    this.pending.push(entry);
    return { cancel: () => (this.pending = this.pending.filter((p) => p !== entry)) };
  }

  /** Moves time forward, firing every timer that falls due, in order. */
  advance(ms: number): void {
    const end = this.monotonic() + ms;
    for (;;) {
      const next = this.pending.filter((p) => p.at <= end).sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (!next) break;
      this.pending = this.pending.filter((p) => p !== next);
      this.ms += Math.max(0, next.at - this.monotonic());
      next.fn();
    }
    this.ms = end + this.stepped;
  }

  /** When the earliest pending timer fires, on the scheduler time now() reads, if any. */
  nextTimerAt(): number | undefined {
    if (!this.pending.length) return undefined;
    return Math.min(...this.pending.map((p) => p.at)) - this.monotonic() + this.now();
  }
}
