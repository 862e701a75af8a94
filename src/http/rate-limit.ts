/**
 * The API's request limits, through @fastify/rate-limit: per API key on every authenticated route,
 * and per client address for requests with an invalid key. Answers carry RateLimit-Limit,
 * -Remaining and -Reset (IETF draft-ietf-httpapi-ratelimit-headers, the plugin's draft-spec
 * mode) and a refused request gets the catalogue's 429 problem with Retry-After (RFC 9110
 * 10.2.3).
 *
 * The counting is the coordination's keyed limits ('api-keys', 'auth-failures';
 * coordination/port.ts, KeyedRate), given to the plugin as its store: one budget per key for
 * every HTTP server of the node (and, in a cluster, of every node). The single-node coordination
 * keeps them in memory (coordination/key-buckets.ts): they only need to survive as long as the
 * process, and a restart forgiving clients is harmless. The plugin's own stores count fixed
 * windows, whose Retry-After may be a whole window; the API promises a token bucket instead
 * (one request comes back every windowMs / limit).
 */
import fastifyRateLimit, { type FastifyRateLimitStore } from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Config } from '../config/schema.js';
import type { Coordination, KeyedRate } from '../coordination/port.js';
import { AppError } from '../domain/errors.js';

/** The names of the API's keyed limits in the coordination. */
const PER_KEY = 'api-keys';
const AUTH_FAILURES = 'auth-failures';

type Limits = Pick<Coordination, 'keyedRate'>;

/**
 * The plugin's store interface over one keyed limit: `current` is what the bucket has used
 * (limit + 1 when refused, which the plugin reads as exceeded) and `ttl` the time until it is
 * full again, or, when refused, until one request is allowed.
 */
class KeyedRateStore implements FastifyRateLimitStore {
  private limiter: KeyedRate | undefined;

  constructor(
    private readonly limits: Limits,
    private readonly name: string,
  ) {}

  incr(key: string, callback: (error: Error | null, result?: { current: number; ttl: number }) => void, timeWindow: number, max: number): void {
    // The plugin passes its options with each call: the limit is made at the first one.
    this.limiter ??= this.limits.keyedRate(this.name, { limit: max, windowMs: timeWindow });
    this.limiter.take(key).then(
      (d) => callback(null, { current: d.allowed ? d.limit - d.remaining : d.limit + 1, ttl: d.resetSeconds * 1000 }),
      (err: unknown) => callback(err instanceof Error ? err : new Error(String(err))),
    );
  }

  /**
   * The one limit made apart from the global one (createRateLimit's, the invalid-key limit):
   * its buckets are the auth failures'. Another such limit would share them, so a second one
   * with other options is refused by the coordination (a name has one configuration).
   */
  child(): FastifyRateLimitStore {
    return new KeyedRateStore(this.limits, AUTH_FAILURES);
  }
}

/** The plugin makes its store with `new store(options)`: a class bound to the coordination. */
function storeClass(limits: Limits): new () => FastifyRateLimitStore {
  return class extends KeyedRateStore {
    constructor() {
      super(limits, PER_KEY);
    }
  };
}

export type ApiLimits = Pick<Config['api'], 'rateLimit' | 'rateWindowMs' | 'authFailureLimit'>;

/**
 * Registers the per-key limit and returns the check of the invalid-key limit, which the
 * authentication hook calls when a presented key is refused (it throws 429 beyond the limit).
 * Both count in `limits`, the node's coordination.
 *
 * Called, not registered, for the reason registerOpenApi gives: the plugin adds its hook to each
 * route from an onRoute hook, which must be in place before the first route is declared. The
 * plugin function has no await, so it has run completely when the call returns. Its onRequest
 * hook is a route hook, which Fastify runs after the root's: the principal is known by then.
 */
export function registerRateLimits(app: FastifyInstance, api: ApiLimits, limits: Limits): (req: FastifyRequest) => Promise<void> {
  const seconds = api.rateWindowMs / 1000;
  fastifyRateLimit(app, {
    store: storeClass(limits),
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
    // A client that has gone has no address any more (req.ip is its closed socket's, undefined):
    // there is no one to answer or to hold back, and a keyed limit's key is a string (the
    // PostgreSQL coordination refuses undefined, which the slower key lookup there made common).
    if (req.ip === undefined) return;
    const r = await failures(req);
    if (!r.isAllowed && r.isExceeded) {
      throw new AppError('rate_limit_exceeded', `Too many requests with an invalid API key from this address; at most ${r.max} per ${seconds} s`, {
        headers: { 'retry-after': String(r.ttlInSeconds) },
      });
    }
  };
}
