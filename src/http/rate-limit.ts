/**
 * Per-API-key request rate limit: a token bucket holding `limit` requests that refills over
 * `windowMs`. Answers carry RateLimit-Limit/Remaining/Reset (IETF draft-ietf-httpapi-ratelimit-headers)
 * and a refused request gets 429 with Retry-After (RFC 9110 10.2.3). State lives in memory: it
 * only needs to survive as long as the process, and a restart forgiving clients is harmless.
 */
export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the bucket is full again (or, when refused, until one request is allowed). */
  resetSeconds: number;
}

export class KeyRateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  private readonly perMs: number;

  constructor(
    private readonly opts: { limit: number; windowMs: number; now?: () => number },
  ) {
    this.perMs = opts.limit / opts.windowMs;
  }

  take(key: string): RateDecision {
    const now = (this.opts.now ?? Date.now)();
    const { limit } = this.opts;
    const b = this.buckets.get(key) ?? { tokens: limit, at: now };
    b.tokens = Math.min(limit, b.tokens + (now - b.at) * this.perMs);
    b.at = now;
    const allowed = b.tokens >= 1;
    if (allowed) b.tokens -= 1;
    this.buckets.set(key, b);
    if (this.buckets.size > 10_000) this.prune(now);
    const missing = allowed ? limit - b.tokens : 1 - b.tokens;
    return {
      allowed,
      limit,
      remaining: Math.floor(b.tokens),
      resetSeconds: Math.max(1, Math.ceil(missing / this.perMs / 1000)),
    };
  }

  /** Drops buckets that have refilled completely: they hold no information. */
  private prune(now: number): void {
    for (const [k, b] of this.buckets) {
      if (b.tokens + (now - b.at) * this.perMs >= this.opts.limit) this.buckets.delete(k);
    }
  }
}
