/**
 * Throttling of failed AUTH attempts (RFC 4954 14 asks servers to make password guessing hard),
 * without letting one client's failures lock out the others behind the same address (NAT):
 *
 *  - per user name and client address: past smtp.authFailureLimit failures in 10 minutes that
 *    user name is locked for that address (454 4.7.0) for the rest of the window, even with the
 *    right password. Keyed by address too, because a lock on the user name alone would let
 *    anyone lock a channel out of SMTP by failing with its id;
 *  - per client address: past smtp.authFailuresPerAddress failures in one minute every AUTH
 *    from the address is refused (421 4.7.0) until the minute has passed, which makes guessing
 *    across user names slow and pauses a correct user behind that address for a minute at most.
 */

const USER_WINDOW_MS = 10 * 60_000;
const ADDRESS_WINDOW_MS = 60_000;
/** Above this many tracked keys, keys without recent failures are dropped. */
const MAX_KEYS = 50_000;

export type AuthVerdict = 'ok' | 'address-throttled' | 'user-locked';

export class AuthThrottle {
  private readonly users: SlidingCounter;
  private readonly addresses: SlidingCounter;

  constructor(opts: { userLimit: number; addressLimit: number; now?: () => number }) {
    // Monotonic: the windows are intervals. On Date.now a step back of an hour kept the
    // failures before it counted for the hour, so an address stayed refused that long.
    const now = opts.now ?? (() => performance.now());
    this.users = new SlidingCounter({ limit: opts.userLimit, windowMs: USER_WINDOW_MS, now });
    this.addresses = new SlidingCounter({ limit: opts.addressLimit, windowMs: ADDRESS_WINDOW_MS, now });
  }

  check(ip: string, username: string): AuthVerdict {
    if (this.addresses.reached(ip)) return 'address-throttled';
    if (this.users.reached(userKey(ip, username))) return 'user-locked';
    return 'ok';
  }

  fail(ip: string, username: string): void {
    this.addresses.add(ip);
    this.users.add(userKey(ip, username));
  }

  /** A success forgets that user's failures; the address keeps its own (other names failed). */
  succeed(ip: string, username: string): void {
    this.users.clear(userKey(ip, username));
  }
}

function userKey(ip: string, username: string): string {
  // Bounded, so a client sending 16 KB user names cannot grow the map's keys.
  return `${ip}\u0000${username.trim().toLowerCase().slice(0, 256)}`;
}

/** Event times per key in a sliding window; at most `limit` kept per key. */
class SlidingCounter {
  private readonly events = new Map<string, number[]>();

  constructor(private readonly opts: { limit: number; windowMs: number; now: () => number }) {}

  reached(key: string): boolean {
    return this.recent(key).length >= this.opts.limit;
  }

  add(key: string): void {
    const list = this.recent(key);
    list.push(this.opts.now());
    this.events.set(key, list.slice(-this.opts.limit));
    if (this.events.size > MAX_KEYS) this.prune();
  }

  clear(key: string): void {
    this.events.delete(key);
  }

  private recent(key: string): number[] {
    const since = this.opts.now() - this.opts.windowMs;
    return (this.events.get(key) ?? []).filter((t) => t > since);
  }

  private prune(): void {
    for (const key of this.events.keys()) if (this.recent(key).length === 0) this.events.delete(key);
  }
}
