/**
 * Admission control for delivery attempts: at most `rate` attempt starts in any 1-second window,
 * and smooth. A token bucket alone (capacity B, refill `rate`/s) lets rate + B through in a
 * second, so it is combined with a sliding window of the last second's starts, which is the hard
 * bound: a start is allowed only while fewer than `rate` starts happened in the last 1000 ms. The
 * small bucket (a tenth of a second's worth by default) spreads starts over the second instead of
 * sending a whole second's budget at once.
 * (Concurrency per destination, the other admission rule, is delivery/site-concurrency.ts.)
 *
 * Kept hand-written, not a limiter package (bottleneck, limiter): time comes in through `now`,
 * which the delivery tests drive with the fake clock (queue/clock.ts), while the packages read
 * Date.now and set their own timers; and none of them gives the hard bound of the sliding
 * window (a bucket alone lets rate + burst through in one second).
 *
 * `now` should be monotonic (Clock.monotonic): these are intervals. A reading that goes back
 * anyway (a wall clock stepped back) is taken as no time passing (forwardOnly): before, the
 * bucket stopped refilling and the window kept the starts "from the future" until the clock
 * caught up, so a step back of an hour let through a handful of attempts in that hour.
 */

export interface RateLimiterOptions {
  /** Starts per second. */
  rate: number;
  /** Bucket size: starts allowed at once. Default: a tenth of the rate, at least 1. */
  burst?: number;
  /** Monotonic milliseconds (Clock.monotonic). */
  now: () => number;
}

const WINDOW_MS = 1000;

/**
 * `read` with its backward steps taken out: after a reading below the previous one, time goes
 * on from the previous reading, with no time passed at the step. Forward steps are kept.
 */
export function forwardOnly(read: () => number): () => number {
  let last = -Infinity;
  let offset = 0;
  return () => {
    const raw = read();
    if (raw < last) offset += last - raw;
    last = raw;
    return raw + offset;
  };
}

export class RateLimiter {
  readonly rate: number;
  readonly burst: number;
  private readonly now: () => number;
  private tokens: number;
  private refilledAt: number;
  /** Start times of the last WINDOW_MS, oldest first (starts[head..]). */
  private starts: number[] = [];
  private head = 0;

  constructor(o: RateLimiterOptions) {
    if (!Number.isFinite(o.rate) || o.rate <= 0) throw new Error(`rate must be positive, got ${o.rate}`);
    this.rate = o.rate;
    this.burst = Math.max(1, Math.floor(o.burst ?? Math.ceil(o.rate / 10)));
    this.now = forwardOnly(o.now);
    this.tokens = this.burst;
    this.refilledAt = this.now();
  }

  /** How many attempts may start right now. */
  available(): number {
    const now = this.now();
    this.refill(now);
    this.prune(now);
    const inWindow = this.starts.length - this.head;
    return Math.max(0, Math.min(Math.floor(this.tokens), Math.floor(this.rate) - inWindow));
  }

  /** Records n starts now; n must not exceed available(). */
  take(n: number): void {
    if (n <= 0) return;
    const now = this.now();
    this.refill(now);
    this.tokens -= n;
    for (let i = 0; i < n; i++) this.starts.push(now);
  }

  /** Milliseconds until available() is at least 1 (0 when it already is). */
  msUntilAvailable(): number {
    if (this.available() > 0) return 0;
    const now = this.now();
    const forToken = this.tokens >= 1 ? 0 : Math.ceil(((1 - this.tokens) * 1000) / this.rate);
    const inWindow = this.starts.length - this.head;
    // The window frees up when the start that makes it full leaves it (1000 ms after it).
    const forWindow = inWindow >= Math.floor(this.rate) ? this.starts[this.starts.length - Math.floor(this.rate)] + WINDOW_MS - now : 0;
    return Math.max(1, forToken, forWindow);
  }

  private refill(now: number): void {
    const elapsed = now - this.refilledAt;
    if (elapsed <= 0) return; // several readings in one millisecond (forwardOnly: never back)
    this.tokens = Math.min(this.burst, this.tokens + (elapsed * this.rate) / 1000);
    this.refilledAt = now;
  }

  /** Forget starts that left the window: only those strictly after now - 1000 count. */
  private prune(now: number): void {
    while (this.head < this.starts.length && this.starts[this.head] <= now - WINDOW_MS) this.head++;
    if (this.head > 1024 && this.head * 2 > this.starts.length) {
      this.starts = this.starts.slice(this.head);
      this.head = 0;
    }
  }
}

/**
 * How much early a receiver may see a message compared with the slot it was sent in (our
 * event loop, the network, its own clock): the pacer spaces slots so that even `rate` + 1
 * messages shifted by this much do not fit in one second. It costs about 1.2% of the rate
 * (49.4 messages/s at 50). It was 20 ms (49.02/s): then a single slot lost to a late timer in
 * 500 took the mean under 49/s (issue 36: 48.89 in one of three quiet runs); at 12 ms the mean
 * has room for a few lost slots, and 7 ms of it (less the tolerance) stay for the receiver's side,
 * which on a loopback sink is well under a millisecond.
 */
export const PACER_MARGIN_MS = 12;

/**
 * How much earlier than its theoretical time a slot may be taken, out of the margin: a timer
 * fires late by a millisecond or more, and a message sent after its slot's time would push
 * every later slot back (49 → 47.6 messages/s at 50/s under load). Sending up to this much
 * early keeps the schedule and leaves the rest of the margin (7 ms) for the receiver's side.
 */
const PACER_TOLERANCE_MS = 5;

export interface PacerOptions {
  /** Messages per second at the receiver, at most, in any 1-second window. */
  rate: number;
  /** Monotonic milliseconds (performance.now). */
  now: () => number;
  /** Default PACER_MARGIN_MS. */
  marginMs?: number;
}

/**
 * Evenly spaced slots for the moment a message reaches its receiver (the end of DATA), so that
 * delivery.rate holds where it is seen: at most `rate` messages in any 1-second window at the
 * receiver, whatever the attempts before it took (a new connection, a reused one, a slow MX
 * lookup). The attempt limiter above bounds starts; starts bunch again at the receiver when
 * attempt times vary (bench/RESULTS.md: 54 in one second at 50/s with its 5-token bucket).
 *
 * GCRA (the "virtual scheduling" form, ITU-T I.371): slots `intervalMs` = (1000 + margin) / rate
 * apart, with a burst of `burst` slots at once that the margin pays for (1 at 50/s; at high rates
 * a few thousand, so the cap-lifted case does not wait on timers). Any `rate` + 1 consecutive
 * slots then span at least 1000 ms (+ the margin less the tolerance, 7 ms, when burst is 1), so
 * no 1-second window holds more than `rate` of them.
 */
export class Pacer {
  readonly intervalMs: number;
  readonly burst: number;
  /** How early a slot may be taken (GCRA's limit is (burst - 1) × interval + this). */
  readonly toleranceMs: number;
  /** Per second, on average, when busy: rate × 1000 / (1000 + margin). */
  readonly effectiveRate: number;
  private readonly now: () => number;
  /** Theoretical time of the next slot once the burst is used up (GCRA's TAT). */
  private tat = -Infinity;

  constructor(o: PacerOptions) {
    if (!Number.isFinite(o.rate) || o.rate <= 0) throw new Error(`rate must be positive, got ${o.rate}`);
    const margin = o.marginMs ?? PACER_MARGIN_MS;
    this.intervalMs = (1000 + margin) / o.rate;
    // (burst - 1) + 1000 / intervalMs must not exceed the rate: see the class comment.
    this.burst = 1 + Math.floor((o.rate * margin) / (1000 + margin));
    // Half of what the burst leaves of the margin, at most PACER_TOLERANCE_MS: any rate + 1
    // slots then still span more than 1000 ms.
    this.toleranceMs = Math.max(0, Math.min(PACER_TOLERANCE_MS, (margin - (this.burst - 1) * this.intervalMs) / 2));
    this.effectiveRate = 1000 / this.intervalMs;
    // A step back would otherwise hold every message until `now` caught up with the TAT.
    this.now = forwardOnly(o.now);
  }

  /**
   * Takes a slot now if one is free (0: send now), else says how many ms until the next one
   * and takes nothing. Slots are taken at the time of sending, never reserved ahead: after a
   * pause of the event loop, the messages that waited go one interval apart again, not all at
   * once (which reserved slots with late timers would do).
   */
  take(): number {
    const now = this.now();
    const wait = this.tat - (this.burst - 1) * this.intervalMs - this.toleranceMs - now;
    // Below a microsecond is the float error of summed intervals, not a wait.
    if (wait >= 1e-3) return wait;
    this.tat = Math.max(this.tat, now) + this.intervalMs;
    return 0;
  }
}
