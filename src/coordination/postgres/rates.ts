/**
 * The shared attempt budget (port.ts, SharedRate) over its rows (rate-sql.ts). Its methods are
 * synchronous (delivery's loop calls them) and spend only what this node reserved from the
 * rows, through the bridge (bridge.ts), so the nodes together never start more than the budget
 * in any 1-second window, nor more than the burst at once.
 *
 * - available() reserves a block: as much as the budget gives now (at most the burst), held
 *   for HOLD_MS. The dispatcher then leases that many jobs and take()s the ones it started;
 *   the starts are reported to the row without waiting (coord_rate_spent, once per event-loop
 *   turn), and what is left when the hold ends goes back (coord_rate_return, also on a timer,
 *   so an idle node gives its block back).
 * - tryTake(n) spends from the block first, then reserves the rest and spends it at once.
 * - When the row grants nothing it answers how long until it would; until then the node does
 *   not ask again (available() answers 0, msUntilAvailable() what is left of that wait).
 *
 * Latency: a node asks the row (one blocking round trip, about 0.7 ms to a local server) when its
 * block is used up or its hold ended, and when the wait the row answered has passed: at most a
 * few times per burst of starts, so at delivery.rate 50 with its burst of 5, about ten to
 * twenty times a second per busy node. Before its first answer (the worker still starting, the
 * database unreachable) a node has nothing reserved, so it starts nothing and asks again after
 * NO_ANSWER_WAIT_MS. Throughput: a block held by one node is not available to the others
 * until it is spent or returned (the bucket counts its starts as still in it, rate-sql.ts), so a
 * node that reserves and then has no job delays the others by at most the hold; the sliding
 * window counts a held block's starts until the hold's end plus one second, until the node
 * reports when they happened. Each report and return is one more statement for the database
 * (not waited for): about one per block.
 */
import type { Timer } from '../../queue/clock.js';
import { RateLimiter } from '../../queue/rate-limiter.js';
import type { RateOptions, SharedRate } from '../port.js';
import type { SyncBridge } from './bridge.js';
import { RESERVE, RETURN, SPENT, type ReserveRow } from './rate-sql.js';
import type { CoordinationTime } from './time.js';

/** How long a reserved block may be spent (local ms): the dispatcher's lease between available() and take() fits easily. */
export const HOLD_MS = 500;

/** How long the node waits before asking again after the row could not be asked. */
const NO_ANSWER_WAIT_MS = 50;

interface Block {
  /** Starts left to spend. */
  n: number;
  /** The row's time of the block's window entry (its reservation's time + the hold). */
  at: number;
  /** The row's time of the reservation. */
  reservedAt: number;
  /** Local time it was asked for, and the end of its hold. */
  askedAt: number;
  until: number;
  timer: Timer;
}

export class PgSharedRate implements SharedRate {
  readonly rate: number;
  readonly burst: number;
  private block: Block | null = null;
  /** Local time before which the row's last answer said nothing more is available. */
  private askAfter = -Infinity;
  /** Starts spent from the block and not reported yet: reported together, once per event-loop turn. */
  private unreported: { block: Block; n: number; at: number } | null = null;
  private flushing: NodeJS.Immediate | undefined;

  constructor(
    private readonly name: string,
    o: RateOptions,
    private readonly bridge: SyncBridge,
    private readonly time: CoordinationTime,
  ) {
    // RateLimiter's own checks and defaults (a burst of a tenth of the rate, at least 1).
    const shape = new RateLimiter({ rate: o.perSecond, burst: o.burst, now: () => 0 });
    this.rate = shape.rate;
    this.burst = shape.burst;
  }

  available(): number {
    this.expire();
    if (this.block && this.block.n > 0) return this.block.n;
    this.reserve(this.burst, HOLD_MS, false);
    return this.block?.n ?? 0;
  }

  take(n: number): void {
    if (!(n > 0)) return;
    const spent = this.spend(n);
    // More than was reserved (the caller took past available()): recorded all the same, as
    // RateLimiter.take records it, at the cost of the next starts.
    if (spent < n) this.reserve(n - spent, 0, true);
  }

  tryTake(n: number): number {
    const want = Math.floor(n);
    if (!(want > 0)) return 0;
    const spent = this.spend(want);
    return spent === want ? spent : spent + this.reserve(want - spent, 0, false);
  }

  msUntilAvailable(): number {
    if (this.available() > 0) return 0;
    return Math.max(1, this.askAfter - this.time.local());
  }

  /** Gives the block back (the coordination stops). */
  close(): void {
    this.giveBack();
  }

  /** Spends up to n from the block and reports them to the row; answers how many. */
  private spend(n: number): number {
    this.expire();
    const b = this.block;
    const k = Math.min(n, b?.n ?? 0);
    if (!b || k <= 0) return 0;
    b.n -= k;
    // When they happened, on the row's clock: at most the time since the ask after the
    // reservation's time, which came before the answer (and never after the block's end).
    const at = Math.min(b.at, b.reservedAt + (this.time.local() - b.askedAt));
    if (this.unreported?.block !== b) this.flush();
    this.unreported ??= { block: b, n: 0, at };
    this.unreported.n += k;
    this.unreported.at = Math.max(this.unreported.at, at);
    // A loop of take(1) (the dispatcher's startReady) reports once; later than they happened
    // is on the safe side (the window keeps them longer).
    this.flushing ??= setImmediate(() => this.flush()).unref();
    return k;
  }

  /** Reports the spent starts (before any other statement of this rate, so the row sees them first). */
  private flush(): void {
    if (this.flushing) clearImmediate(this.flushing);
    this.flushing = undefined;
    const u = this.unreported;
    if (!u) return;
    this.unreported = null;
    this.bridge.post(SPENT, [this.name, this.rate, this.burst, u.block.at, u.n, u.at]);
  }

  /** Asks the row for up to `want` (a block when holdMs > 0, else spent at once); answers what was granted. */
  private reserve(want: number, holdMs: number, force: boolean): number {
    const askedAt = this.time.local();
    if (!force && askedAt < this.askAfter) return 0;
    this.flush();
    const rows = this.bridge.call<ReserveRow>(RESERVE, [this.name, this.time.query(), this.rate, this.burst, want, holdMs, force]);
    const row = rows?.[0];
    if (!row) {
      this.askAfter = askedAt + NO_ANSWER_WAIT_MS;
      return 0;
    }
    this.askAfter = askedAt + row.wait_ms;
    if (row.granted > 0 && holdMs > 0) {
      this.giveBack();
      const timer = this.time.setTimer(() => this.expire(), holdMs);
      this.block = { n: row.granted, at: row.block_at, reservedAt: row.block_at - holdMs, askedAt, until: askedAt + holdMs, timer };
    }
    return row.granted;
  }

  /** Ends the block once its hold is over. */
  private expire(): void {
    if (this.block && this.time.local() >= this.block.until) this.giveBack();
  }

  private giveBack(): void {
    const b = this.block;
    if (!b) return;
    this.block = null;
    b.timer.cancel();
    this.flush();
    if (b.n > 0) this.bridge.post(RETURN, [this.name, this.time.query(), this.rate, this.burst, b.at, b.n]);
  }
}
