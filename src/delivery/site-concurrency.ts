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
 * Feedback ("slow down"): concurrency-feedback.ts halves the site's concurrency on a reply that
 * asks for fewer sessions and restores it step by step after quiet periods.
 */
import type { SiteLimitsFn } from './site-limits.js';
import type { AbortLike } from './attempt-abort.js';
import { SiteDirectory, type SiteLearner } from './sites.js';
import { ConcurrencyFeedback, DEFAULT_QUIET_MS, type FeedbackChange } from './concurrency-feedback.js';

/** A change of a site's concurrency, for the log (one line per change): the feedback's change, keyed by the site. */
export type ConcurrencyChange = Omit<FeedbackChange, 'key'> & { site: string };

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
  private readonly feedback: ConcurrencyFeedback;

  constructor(private readonly o: SiteConcurrencyOptions) {
    this.feedback = new ConcurrencyFeedback({
      now: o.now,
      quietMs: o.quietMs ?? DEFAULT_QUIET_MS,
      onChange: o.onChange && (({ key, ...change }) => o.onChange!({ ...change, site: key })),
    });
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
    return this.feedback.limitOf(key, this.o.limits(key).concurrency);
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
  admit(domain: string, signal: AbortLike): Promise<boolean> | undefined {
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
    this.feedback.slowDown(key, this.o.limits(key).concurrency, startedAt);
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
