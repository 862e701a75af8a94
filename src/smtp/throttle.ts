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
 *
 * The counts are the coordination's failure windows ('smtp-auth-users', 'smtp-auth-addresses';
 * coordination/port.ts, FailureWindow), so a guesser spreading tries over a cluster's nodes
 * meets the same limits; on one node they are this process's (coordination/failure-windows.ts).
 */
import { LocalCoordination } from '../coordination/local.js';
import type { Coordination, FailureWindow } from '../coordination/port.js';

const USER_WINDOW_MS = 10 * 60_000;
const ADDRESS_WINDOW_MS = 60_000;

export type AuthVerdict = 'ok' | 'address-throttled' | 'user-locked';

export interface AuthThrottleOptions {
  userLimit: number;
  addressLimit: number;
  /** The node's coordination (the daemon's). Default: a single-node one of this throttle's own, on `now`. */
  coordination?: Pick<Coordination, 'failures'>;
  /** Monotonic milliseconds for the default coordination (tests); default performance.now. */
  now?: () => number;
}

export class AuthThrottle {
  private readonly users: FailureWindow;
  private readonly addresses: FailureWindow;

  constructor(opts: AuthThrottleOptions) {
    const c = opts.coordination ?? new LocalCoordination({ nodeId: 'local', realTime: opts.now });
    this.users = c.failures('smtp-auth-users', { limit: opts.userLimit, windowMs: USER_WINDOW_MS });
    this.addresses = c.failures('smtp-auth-addresses', { limit: opts.addressLimit, windowMs: ADDRESS_WINDOW_MS });
  }

  async check(ip: string, username: string): Promise<AuthVerdict> {
    if (await this.addresses.reached(ip)) return 'address-throttled';
    if (await this.users.reached(userKey(ip, username))) return 'user-locked';
    return 'ok';
  }

  async fail(ip: string, username: string): Promise<void> {
    await this.addresses.add(ip);
    await this.users.add(userKey(ip, username));
  }

  /** A success forgets that user's failures; the address keeps its own (other names failed). */
  async succeed(ip: string, username: string): Promise<void> {
    await this.users.clear(userKey(ip, username));
  }
}

function userKey(ip: string, username: string): string {
  // Bounded, so a client sending 16 KB user names cannot grow the map's keys.
  return `${ip}\u0000${username.trim().toLowerCase().slice(0, 256)}`;
}
