/**
 * Attempts in flight per MX site (sites.ts), and the site's concurrency feedback.
 *
 * Counting: every attempt is counted under its domain's key at the time it starts (the site, or
 * the domain itself until its site is known). When an MX lookup teaches the site of a domain
 * that has attempts in flight, their count moves from the old key to the site, so the planning
 * of the next jobs of that site sees them. While the site of a domain is unknown (`probe`), the
 * domain gets one attempt in flight: its MX lookup, a few milliseconds in, tells the site, and
 * the dispatcher plans the domain's other jobs against that site's budget. Without the probe, ten
 * new domains hosted together would open ten times the site's limit in the first second.
 *
 * A probe can find its site full: while it looked the domain up, attempts of other domains of
 * the same site (learned meanwhile) took the site's room, and the probe's count moving to the
 * site puts it over its limit. The attempt then waits before it connects (admit(), called by the
 * attempt once the MX lookup named the site) until an attempt of the site ends, so that the
 * sessions at the site never pass its limit (found by the pg-suite: three sessions at a site of
 * two, when one domain's probe learned the site before the other's).
 *
 * Feedback ("slow down"): a reply that says the receiver wants fewer sessions (421, or a
 * rate-limit reply: the `rate_limited` category of domain/bounce-rules.ts) halves the site's
 * concurrency, at least 1; after a quiet period without such a reply it grows back by one, step
 * by step, up to the configured limit. This is Postfix's destination concurrency feedback
 * (qmgr: a negative feedback lowers the window, positive feedback restores it) with coarser
 * steps. Replies to attempts started before the last decrease were sent under the old
 * concurrency and do not lower it again: ten sessions refused at once halve it once, not ten times.
 */
import type { AttemptResult } from '../domain/delivery-result.js';
import type { SiteLimitsFn } from './site-limits.js';
import { SiteDirectory, type SiteLearner } from './sites.js';

/** A change of a site's concurrency, for the log (one line per change). */
export interface ConcurrencyChange {
  site: string;
  from: number;
  to: number;
  /** The configured limit the site grows back to. */
  limit: number;
  reason: 'slow_down' | 'restored';
}

export interface SiteConcurrencyOptions {
  limits: SiteLimitsFn;
  now: () => number;
  /** How long a site must go without a "slow down" reply before each step back up. Default 60 s. */
  quietMs?: number;
  onChange?: (change: ConcurrencyChange) => void;
  /**
   * One attempt at a time for a domain whose site is not known yet. Only when something tells
   * the sites (the dispatcher's own MxResolver); an attempt function without MX lookups (tests)
   * never does, and each domain is then its own site.
   */
  probe?: boolean;
}

interface Lowered {
  limit: number;
  /** When it was last lowered: replies to attempts started before do not lower it again. */
  loweredAt: number;
  /** Start of the current quiet period (the last "slow down" reply or step up). */
  quietSince: number;
}

const DEFAULT_QUIET_MS = 60_000;

interface Waiter {
  key: string;
  resolve: (admitted: boolean) => void;
}

export class SiteConcurrency implements SiteLearner {
  private readonly directory = new SiteDirectory();
  private readonly counts = new Map<string, number>();
  /** Attempts counted under a key that wait in admit() for room, in order. */
  private readonly waiters: Waiter[] = [];
  private readonly waiting = new Map<string, number>();
  /** Per domain with attempts in flight: the key they are counted under, and how many. */
  private readonly domains = new Map<string, { key: string; n: number }>();
  private readonly lowered = new Map<string, Lowered>();
  private readonly quietMs: number;

  constructor(private readonly o: SiteConcurrencyOptions) {
    this.quietMs = o.quietMs ?? DEFAULT_QUIET_MS;
  }

  /** The key a domain's attempts are counted under. */
  keyOf(domain: string): string {
    return this.directory.keyOf(domain);
  }

  count(key: string): number {
    return this.counts.get(key) ?? 0;
  }

  /** The concurrency a site has now: its configured limit, or less after a "slow down". */
  limitOf(key: string): number {
    const configured = this.o.limits(key).concurrency;
    const low = this.lowered.get(key);
    return low ? this.restore(key, low, configured) : configured;
  }

  /** True when one more attempt of this domain may start (`pending`: ones about to start under its key). */
  hasRoom(domain: string, pending = 0): boolean {
    return this.count(this.keyOf(domain)) + pending < this.limitFor(domain);
  }

  /** The attempts a domain may have in flight under its key now: one while its site is unknown (the probe). */
  limitFor(domain: string): number {
    return this.o.probe && !this.directory.knows(domain) ? 1 : this.limitOf(this.keyOf(domain));
  }

  acquire(domain: string): void {
    const key = this.keyOf(domain);
    const d = this.domains.get(domain);
    if (d && d.key !== key) this.move(d, key);
    this.add(key, 1);
    if (d) d.n++;
    else this.domains.set(domain, { key, n: 1 });
  }

  release(domain: string): void {
    const d = this.domains.get(domain);
    if (!d) return;
    this.add(d.key, -1);
    if (--d.n === 0) this.domains.delete(domain);
    this.admitWaiting();
  }

  /**
   * Called by an attempt (acquired) once its MX lookup named the site, before it connects:
   * undefined when the site has room for it (the usual case: it was planned against the site),
   * else a promise that resolves true once an attempt of the site ended and left room, or false
   * when `signal` ended the wait (the attempt is called off before connecting).
   */
  admit(domain: string, signal: AbortSignal): Promise<boolean> | undefined {
    const key = this.keyOf(domain);
    if (this.active(key) <= this.limitOf(key)) return undefined;
    return new Promise<boolean>((resolve) => {
      const onAbort = () => this.leave(waiter, false);
      const waiter: Waiter = {
        key,
        resolve: (admitted) => {
          signal.removeEventListener('abort', onAbort);
          resolve(admitted);
        },
      };
      this.waiters.push(waiter);
      this.waiting.set(key, (this.waiting.get(key) ?? 0) + 1);
      if (signal.aborted) return this.leave(waiter, false);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Attempts of the key that are not waiting in admit(). */
  private active(key: string): number {
    return this.count(key) - (this.waiting.get(key) ?? 0);
  }

  /** Lets waiters go, in order, while their site has room for one more active attempt. */
  private admitWaiting(): void {
    for (const w of [...this.waiters]) if (this.active(w.key) < this.limitOf(w.key)) this.leave(w, true);
  }

  private leave(w: Waiter, admitted: boolean): void {
    const i = this.waiters.indexOf(w);
    if (i < 0) return;
    this.waiters.splice(i, 1);
    const n = (this.waiting.get(w.key) ?? 1) - 1;
    if (n > 0) this.waiting.set(w.key, n);
    else this.waiting.delete(w.key);
    w.resolve(admitted);
  }

  /** Records the site of a domain; true when that is news (the dispatcher then plans again). */
  learn(domain: string, site: string): boolean {
    if (this.directory.learn(domain, site) === undefined) return false;
    const d = this.domains.get(domain);
    if (d && d.key !== site) this.move(d, site);
    return true;
  }

  /** A "slow down" reply for an attempt to this domain that started at startedAt. */
  slowDown(domain: string, startedAt: number): void {
    const key = this.keyOf(domain);
    const now = this.o.now();
    const current = this.limitOf(key);
    const low = this.lowered.get(key);
    if (low && low.loweredAt > startedAt) {
      low.quietSince = now; // already answered by the last decrease; the quiet period starts again
      return;
    }
    const to = Math.max(1, Math.floor(current / 2));
    this.lowered.set(key, { limit: to, loweredAt: now, quietSince: now });
    if (to !== current) this.o.onChange?.({ site: key, from: current, to, limit: this.o.limits(key).concurrency, reason: 'slow_down' });
  }

  /** One step up per quiet period that passed; forgets the site once it is back at its limit. */
  private restore(key: string, low: Lowered, configured: number): number {
    const steps = Math.floor((this.o.now() - low.quietSince) / this.quietMs);
    if (steps <= 0) return Math.min(low.limit, configured);
    const from = low.limit;
    low.limit = Math.min(configured, low.limit + steps);
    low.quietSince += steps * this.quietMs;
    if (low.limit >= configured) this.lowered.delete(key);
    if (low.limit !== from) this.o.onChange?.({ site: key, from, to: low.limit, limit: configured, reason: 'restored' });
    return low.limit;
  }

  private move(d: { key: string; n: number }, to: string): void {
    this.add(d.key, -d.n);
    this.add(to, d.n);
    d.key = to;
  }

  private add(key: string, n: number): void {
    const v = this.count(key) + n;
    if (v > 0) this.counts.set(key, v);
    else this.counts.delete(key);
  }
}
