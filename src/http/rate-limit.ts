/**
 * The API's request limits, through @fastify/rate-limit: per API key on every authenticated route,
 * and per client address for requests with an invalid key. Answers carry RateLimit-Limit,
 * -Remaining and -Reset (IETF draft-ietf-httpapi-ratelimit-headers, the plugin's draft-spec
 * mode) and a refused request gets the catalogue's 429 problem with Retry-After (RFC 9110
 * 10.2.3). State lives in memory: it only needs to survive as long as the process, and a restart
 * forgiving clients is harmless.
 *
 * The plugin's own stores count fixed windows, whose Retry-After may be a whole window; the API
 * promises a token bucket instead (one request comes back every windowMs / limit), so the
 * counting is KeyRateLimiter's, given to the plugin as its store.
 */
import fastifyRateLimit, { type FastifyRateLimitStore } from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Config } from '../config/schema.js';
import { AppError } from '../domain/errors.js';

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the bucket is full again (or, when refused, until one request is allowed). */
  resetSeconds: number;
}

/**
 * Token buckets per key. Time is monotonic (performance.now) by default: a bucket measures an
 * interval, and on the wall clock a step back of an hour made the elapsed time negative, which
 * sank every bucket used before the step far below zero (429 with Retry-After: 3536 on every
 * request). A reading below the bucket's last one still counts as no time passed.
 */
export class KeyRateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  private readonly perMs: number;

  constructor(
    private readonly opts: { limit: number; windowMs: number; now?: () => number },
  ) {
    this.perMs = opts.limit / opts.windowMs;
  }

  take(key: string): RateDecision {
    const now = this.opts.now ? this.opts.now() : performance.now();
    const { limit } = this.opts;
    const b = this.buckets.get(key) ?? { tokens: limit, at: now };
    b.tokens = Math.min(limit, b.tokens + Math.max(0, now - b.at) * this.perMs);
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
      if (b.tokens + Math.max(0, now - b.at) * this.perMs >= this.opts.limit) this.buckets.delete(k);
    }
  }
}

/**
 * The plugin's store interface over one KeyRateLimiter: `current` is what the bucket has used
 * (limit + 1 when refused, which the plugin reads as exceeded) and `ttl` the time until it is
 * full again, or, when refused, until one request is allowed.
 */
class TokenBucketStore implements FastifyRateLimitStore {
  private limiter: KeyRateLimiter | undefined;

  incr(key: string, callback: (error: Error | null, result?: { current: number; ttl: number }) => void, timeWindow: number, max: number): void {
    this.limiter ??= new KeyRateLimiter({ limit: max, windowMs: timeWindow });
    const d = this.limiter.take(key);
    callback(null, { current: d.allowed ? d.limit - d.remaining : d.limit + 1, ttl: d.resetSeconds * 1000 });
  }

  /** Each limit (the global one, createRateLimit's) counts in buckets of its own. */
  child(): FastifyRateLimitStore {
    return new TokenBucketStore();
  }
}

export type ApiLimits = Pick<Config['api'], 'rateLimit' | 'rateWindowMs' | 'authFailureLimit'>;

/**
 * Registers the per-key limit and returns the check of the invalid-key limit, which the
 * authentication hook calls when a presented key is refused (it throws 429 beyond the limit).
 *
 * Called, not registered, for the reason registerOpenApi gives: the plugin adds its hook to each
 * route from an onRoute hook, which must be in place before the first route is declared. The
 * plugin function has no await, so it has run completely when the call returns. Its onRequest
 * hook is a route hook, which Fastify runs after the root's: the principal is known by then.
 */
export function registerRateLimits(app: FastifyInstance, api: ApiLimits): (req: FastifyRequest) => Promise<void> {
  const seconds = api.rateWindowMs / 1000;
  fastifyRateLimit(app, {
    store: TokenBucketStore,
    max: api.rateLimit,
    timeWindow: api.rateWindowMs,
    enableDraftSpec: true,
    keyGenerator: (req) => req.principal?.keyId ?? '',
    // Public routes and unmatched paths are answered without a principal, hence without a limit.
    allowList: (req) => !req.principal,
    // The plugin has set the RateLimit headers and Retry-After on the reply already.
    errorResponseBuilder: (_req, ctx) => new AppError('rate_limit_exceeded', `At most ${ctx.max} requests per ${seconds} s per API key`),
  }, () => {});
  // Invalid keys are counted per client address, apart from the per-key limit: guessing keys
  // costs the guesser a 429 after a few tries, while valid keys from the same address (a NAT,
  // a CI fleet) never touch this bucket.
  // (allowList: none; the per-key limit's would pass every request, as none has a principal.)
  const failures = app.createRateLimit({ max: api.authFailureLimit, timeWindow: api.rateWindowMs, keyGenerator: (req) => req.ip, allowList: [] });
  return async (req) => {
    const r = await failures(req);
    if (!r.isAllowed && r.isExceeded) {
      throw new AppError('rate_limit_exceeded', `Too many requests with an invalid API key from this address; at most ${r.max} per ${seconds} s`, {
        headers: { 'retry-after': String(r.ttlInSeconds) },
      });
    }
  };
}
