/**
 * A concurrency that a receiver's "slow down" lowers and quiet time restores, per key: an MX
 * site (site-concurrency.ts) or one source at one site (source-sessions.ts, issue 35).
 *
 * A reply that says the receiver wants fewer sessions (421, or a rate-limit reply: the
 * `rate_limited` category of domain/bounce-rules.ts) halves the key's concurrency, at least 1;
 * after a quiet period without such a reply it grows back by one, step by step, up to the
 * configured limit. This is Postfix's destination concurrency feedback (qmgr: a negative
 * feedback lowers the window, positive feedback restores it) with coarser steps. Replies to
 * attempts started before the last decrease were sent under the old concurrency and do not
 * lower it again: ten sessions refused at once halve it once, not ten times.
 */

/** A change of a key's concurrency, for the log (one line per change). */
export interface FeedbackChange {
  key: string;
  from: number;
  to: number;
  /** The configured limit the key grows back to. */
  limit: number;
  reason: 'slow_down' | 'restored';
}

interface Lowered {
  limit: number;
  /** When it was last lowered: replies to attempts started before do not lower it again. */
  loweredAt: number;
  /** Start of the current quiet period (the last "slow down" reply or step up). */
  quietSince: number;
}

export const DEFAULT_QUIET_MS = 60_000;

export class ConcurrencyFeedback {
  private readonly lowered = new Map<string, Lowered>();

  constructor(
    private readonly o: {
      now: () => number;
      /** How long a key must go without a "slow down" reply before each step back up. */
      quietMs: number;
      onChange?: (change: FeedbackChange) => void;
    },
  ) {}

  /** The concurrency a key has now: `configured`, or less after a "slow down". */
  limitOf(key: string, configured: number): number {
    const low = this.lowered.get(key);
    return low ? this.restore(key, low, configured) : configured;
  }

  /** A "slow down" reply for an attempt under this key that started at startedAt. */
  slowDown(key: string, configured: number, startedAt: number): void {
    const now = this.o.now();
    const current = this.limitOf(key, configured);
    const low = this.lowered.get(key);
    if (low && low.loweredAt > startedAt) {
      low.quietSince = now; // already answered by the last decrease; the quiet period starts again
      return;
    }
    const to = Math.max(1, Math.floor(current / 2));
    this.lowered.set(key, { limit: to, loweredAt: now, quietSince: now });
    if (to !== current) this.o.onChange?.({ key, from: current, to, limit: configured, reason: 'slow_down' });
  }

  /** One step up per quiet period that passed; forgets the key once it is back at its limit. */
  private restore(key: string, low: Lowered, configured: number): number {
    const steps = Math.floor((this.o.now() - low.quietSince) / this.o.quietMs);
    if (steps <= 0) return Math.min(low.limit, configured);
    const from = low.limit;
    low.limit = Math.min(configured, low.limit + steps);
    low.quietSince += steps * this.o.quietMs;
    if (low.limit >= configured) this.lowered.delete(key);
    if (low.limit !== from) this.o.onChange?.({ key, from, to: low.limit, limit: configured, reason: 'restored' });
    return low.limit;
  }
}
