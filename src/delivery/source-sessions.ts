/**
 * Sessions in flight per source per MX site (issue 35: per-site concurrency "kept per source as
 * well as in total"). The dispatcher plans with the site's total (site-concurrency.ts); this
 * counts each source's share of it, so that a receiver's "slow down" to one sending IP lowers
 * that IP's sessions at the site (the providers' limits are per IP: domain/site-limits.ts) while
 * the pool's other sources carry on at theirs, and so that a gate's ceiling (a shaping rule's
 * "one connection") holds for one source at one site.
 *
 * A source's limit at a site: the site's configured concurrency, lowered by this source's own
 * "slow down" replies there (concurrency-feedback.ts), and by the lowest ceiling a gate sets.
 *
 * The count is this node's: a source is an address of one machine, so only the node on that
 * machine can bind it (another node naming it gets EADDRNOTAVAIL and the health gate takes it
 * out there), and one node's count is the source's count. The site's total across nodes stays
 * the cluster's (cluster-sites.ts).
 *
 * Keys are the site key when the session started (the recipient domain until its MX lookup
 * named the site: that first attempt of an unknown domain is one session, the site's probe).
 */
import { ConcurrencyFeedback, DEFAULT_QUIET_MS, type FeedbackChange } from './concurrency-feedback.js';
import type { AbortLike } from './attempt-abort.js';

export interface SourceSessionsOptions {
  /** The site's configured concurrency (site-limits.ts), before any feedback. */
  siteLimit: (site: string) => number;
  /** The lowest concurrency ceiling the gates set for the source at the site now, and what it counts over (a provider's sites together), if any. */
  ceiling: (source: string, site: string) => { concurrency?: number; scope?: string } | undefined;
  now: () => number;
  quietMs?: number;
  onChange?: (change: FeedbackChange & { source: string; site: string }) => void;
}

export class SourceSessions {
  private readonly counts = new Map<string, number>();
  private readonly feedback: ConcurrencyFeedback;
  /** Attempts waiting for a session of a site to end (any source: a pool's other source may do). */
  private readonly waiters = new Map<string, Set<() => void>>();
  /** Sessions ended so far (any site): a caller that saw all busy at `ended` N waits only if none ended since. */
  private endedCount = 0;

  constructor(private readonly o: SourceSessionsOptions) {
    this.feedback = new ConcurrencyFeedback({
      now: o.now,
      quietMs: o.quietMs ?? DEFAULT_QUIET_MS,
      onChange: o.onChange && ((c) => o.onChange!({ ...c, ...split(c.key) })),
    });
  }

  count(source: string, site: string): number {
    return this.counts.get(keyOf(source, site)) ?? 0;
  }

  /** The sessions the source may have at the site now, by the site's limit and its own "slow down" feedback. */
  limitOf(source: string, site: string): number {
    return this.feedback.limitOf(keyOf(source, site), this.o.siteLimit(site));
  }

  /**
   * Whether one more session of the source may start at the site: within its limit there, and
   * within a gate's ceiling, counted over the ceiling's scope (the site, or a provider's sites).
   */
  hasRoom(source: string, site: string): boolean {
    if (this.count(source, site) >= this.limitOf(source, site)) return false;
    const ceiling = this.o.ceiling(source, site);
    if (ceiling?.concurrency === undefined) return true;
    const counted = ceiling.scope === undefined ? this.count(source, site) : this.count(source, scopeKey(ceiling.scope));
    return counted < Math.max(1, ceiling.concurrency);
  }

  /**
   * Counts one session, under its site and under the scope of a ceiling that holds now (a
   * session that started before a ceiling came is not counted in its scope: the ceiling holds
   * from the next sessions on); the returned function ends it (once).
   */
  acquire(source: string, site: string): () => void {
    const keys = [keyOf(source, site)];
    const scope = this.o.ceiling(source, site)?.scope;
    if (scope !== undefined) keys.push(keyOf(source, scopeKey(scope)));
    for (const key of keys) this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      for (const key of keys) {
        const n = (this.counts.get(key) ?? 1) - 1;
        if (n > 0) this.counts.set(key, n);
        else this.counts.delete(key);
      }
      this.endedCount++;
      // A session counted in a scope frees room at every site of it: all waiters look again.
      const sites = scope === undefined ? [site] : [...this.waiters.keys()];
      for (const s of sites) {
        const waiting = this.waiters.get(s);
        this.waiters.delete(s);
        for (const wake of waiting ?? []) wake();
      }
    };
  }

  /** A "slow down" reply to the source at the site, for an attempt that started at startedAt. */
  slowDown(source: string, site: string, startedAt: number): void {
    this.feedback.slowDown(keyOf(source, site), this.o.siteLimit(site), startedAt);
  }

  /** The count of sessions ended so far, read before a look at the sessions (see waitForRoom). */
  get ended(): number {
    return this.endedCount;
  }

  /**
   * Resolves true when a session of the site ends (any source's), false when `signal` ends the
   * wait first: the caller asks its pool again then. `seen` is `ended` when the caller found
   * every source busy: a session that ended since (between that look and this call) answers at
   * once, so no end is missed.
   */
  waitForRoom(site: string, seen: number, signal: AbortLike): Promise<boolean> {
    if (signal.aborted) return Promise.resolve(false);
    if (this.endedCount !== seen) return Promise.resolve(true);
    return new Promise<boolean>((resolve) => {
      let set = this.waiters.get(site);
      if (!set) this.waiters.set(site, (set = new Set()));
      const onAbort = () => {
        set.delete(wake);
        resolve(false);
      };
      const wake = () => {
        signal.removeEventListener('abort', onAbort);
        resolve(true);
      };
      set.add(wake);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }
}

// A scope's counts beside the sites' (a site key never has a ":": sites are host names).
function scopeKey(scope: string): string {
  return `scope:${scope}`;
}

// A source name is config text without "\n" (sending-ips.ts checks names); the site is a host name.
function keyOf(source: string, site: string): string {
  return `${source}\n${site}`;
}

function split(key: string): { source: string; site: string } {
  const i = key.indexOf('\n');
  return { source: key.slice(0, i), site: key.slice(i + 1) };
}
