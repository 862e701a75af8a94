/** A manual clock for the dispatcher: time moves only when a test calls advance(). */
import type { Clock, Timer } from '../../src/queue/clock.js';

interface Pending {
  at: number;
  seq: number;
  fn: () => void;
}

export class FakeClock implements Clock {
  private pending: Pending[] = [];
  private seq = 0;

  constructor(public ms: number = Date.UTC(2025, 0, 6, 9, 0, 0)) {}

  now(): number {
    return this.ms;
  }

  setTimer(fn: () => void, ms: number): Timer {
    if (ms <= 0) {
      // Already due: fire soon, as a real timer would, without waiting for advance().
      const handle = setImmediate(fn);
      return { cancel: () => clearImmediate(handle) };
    }
    const entry = { at: this.ms + Math.max(0, ms), seq: this.seq++, fn };
    this.pending.push(entry);
    return { cancel: () => (this.pending = this.pending.filter((p) => p !== entry)) };
  }

  /** Moves time forward, firing every timer that falls due, in order. */
  advance(ms: number): void {
    const end = this.ms + ms;
    for (;;) {
      const next = this.pending.filter((p) => p.at <= end).sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (!next) break;
      this.pending = this.pending.filter((p) => p !== next);
      this.ms = Math.max(this.ms, next.at);
      next.fn();
    }
    this.ms = end;
  }

  /** The earliest pending timer's time, if any. */
  nextTimerAt(): number | undefined {
    return this.pending.length ? Math.min(...this.pending.map((p) => p.at)) : undefined;
  }
}
