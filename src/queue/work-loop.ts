/**
 * The wake-up discipline shared by the delivery and webhook dispatchers: run a round when
 * kicked (new work committed, an attempt finished) or when the round's own wake-up time comes,
 * never two rounds at once, and never a busy poll.
 *
 *  - kick() coalesces: any number of kicks before the next tick make one round; a kick during
 *    a round makes the round run once more right after it (so no kick is lost).
 *  - A round returns the time it wants to run again at the latest (the next due job, an idle
 *    check, the rate limiter's next token); the loop keeps one timer for it, on the injected
 *    clock (fake in tests, unref'd in production).
 *  - A round that throws is reported to onError and retried after retryMs.
 */
import type { Clock, Timer } from './clock.js';

export interface WorkLoopOptions {
  clock: Clock;
  /** One round of work. Resolves with when to run again at the latest (ms since the epoch). */
  round: () => Promise<number>;
  /** A round failed; the loop retries after retryMs. */
  onError: (err: unknown) => void;
  retryMs: number;
}

export class WorkLoop {
  private active = false;
  private running: Promise<void> | null = null;
  private again = false;
  private kickPending = false;
  private timer: Timer | null = null;

  constructor(private readonly o: WorkLoopOptions) {}

  start(): void {
    this.active = true;
    this.kick();
  }

  /** Stops planning rounds and waits for the one in progress. */
  async stop(): Promise<void> {
    this.active = false;
    this.timer?.cancel();
    this.timer = null;
    await this.running;
  }

  /** Run a round soon (next tick), or once more after the current one. */
  kick(): void {
    if (!this.active || this.kickPending) return;
    this.kickPending = true;
    setImmediate(() => {
      this.kickPending = false;
      void this.run();
    });
  }

  private async run(): Promise<void> {
    if (!this.active) return;
    if (this.running) {
      this.again = true;
      return;
    }
    let wakeAt = 0;
    this.running = (async () => {
      do {
        this.again = false;
        wakeAt = await this.o.round();
      } while (this.again && this.active);
    })().catch((err) => {
      this.o.onError(err);
      wakeAt = this.o.clock.now() + this.o.retryMs;
    });
    await this.running;
    this.running = null;
    this.plan(wakeAt);
    // A kick that came after the last round had read its work: one more round, never a lost kick.
    if (this.again) this.kick();
  }

  private plan(atMs: number): void {
    if (!this.active) return;
    this.timer?.cancel();
    this.timer = this.o.clock.setTimer(() => {
      this.timer = null;
      void this.run();
    }, Math.max(0, atMs - this.o.clock.now()));
  }
}
