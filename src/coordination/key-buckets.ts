/**
 * Token buckets per key in one process (local.ts's keyedRate): `limit` requests per `windowMs`,
 * one coming back every windowMs / limit: the API's per-key and invalid-key limits
 * (http/rate-limit.ts, through keyedRate), which had this algorithm before the port.
 *
 * Time is monotonic (performance.now by default): a bucket measures an interval, and a step
 * of the wall clock back made elapsed times negative (429 with Retry-After: 3536 on every
 * request). A reading below the bucket's last one counts as no time passed.
 */
import type { RateDecision } from './port.js';

export interface KeyBucketsOptions {
  limit: number;
  windowMs: number;
  now?: () => number;
}

/** Buckets kept before the full ones (which hold no information) are dropped. */
const PRUNE_ABOVE = 10_000;

export class KeyBuckets {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  private readonly perMs: number;

  constructor(private readonly o: KeyBucketsOptions) {
    if (!(o.limit > 0) || !(o.windowMs > 0)) throw new Error(`a keyed rate needs a positive limit and window, got ${o.limit} per ${o.windowMs} ms`);
    this.perMs = o.limit / o.windowMs;
  }

  take(key: string): RateDecision {
    const now = this.o.now ? this.o.now() : performance.now();
    const { limit } = this.o;
    const b = this.buckets.get(key) ?? { tokens: limit, at: now };
    b.tokens = Math.min(limit, b.tokens + Math.max(0, now - b.at) * this.perMs);
    b.at = now;
    const allowed = b.tokens >= 1;
    if (allowed) b.tokens -= 1;
    this.buckets.set(key, b);
    if (this.buckets.size > PRUNE_ABOVE) this.prune(now);
    const missing = allowed ? limit - b.tokens : 1 - b.tokens;
    return {
      allowed,
      limit,
      remaining: Math.floor(b.tokens),
      resetSeconds: Math.max(1, Math.ceil(missing / this.perMs / 1000)),
    };
  }

  private prune(now: number): void {
    for (const [k, b] of this.buckets) {
      if (b.tokens + Math.max(0, now - b.at) * this.perMs >= this.o.limit) this.buckets.delete(k);
    }
  }
}
