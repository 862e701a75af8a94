/**
 * Counters per key in one process (local.ts's counters()): a count and an expiry per key. An
 * add checks every cap and counts without an await, so racing callers in this process cannot
 * pass a cap together; a cluster does the same under row locks (postgres/counters.ts).
 *
 * Time is the coordination's monotonic clock: a key's ttl is an interval from the add.
 */
import type { CounterAnswer, CounterLimit, Counters } from './port.js';

/** Above this many keys, expired keys are dropped (the janitor's job in a cluster). */
const PRUNE_ABOVE = 10_000;

export class LocalCounters implements Counters {
  private readonly keys = new Map<string, { n: number; expiresAt: number }>();

  constructor(private readonly now: () => number) {}

  async add(limits: readonly CounterLimit[]): Promise<CounterAnswer> {
    distinct(limits);
    const now = this.now();
    const counts = limits.map((l) => this.count(l.key, now));
    if (limits.some((l, i) => counts[i]! + 1 > l.cap)) return { added: false, counts };
    limits.forEach((l, i) => this.keys.set(l.key, { n: counts[i]! + 1, expiresAt: now + l.ttlMs }));
    if (this.keys.size > PRUNE_ABOVE) this.prune(now);
    return { added: true, counts: counts.map((n) => n + 1) };
  }

  async read(): Promise<Map<string, number>> {
    const now = this.now();
    this.prune(now);
    return new Map([...this.keys].map(([key, v]) => [key, v.n]));
  }

  private count(key: string, now: number): number {
    const k = this.keys.get(key);
    return k && k.expiresAt > now ? k.n : 0;
  }

  private prune(now: number): void {
    for (const [key, v] of this.keys) if (v.expiresAt <= now) this.keys.delete(key);
  }
}

/** One add counts each key once: a key twice in a set is the caller's mistake. */
export function distinct(limits: readonly CounterLimit[]): void {
  if (new Set(limits.map((l) => l.key)).size !== limits.length) throw new Error(`counters: a key named twice in one add (${limits.map((l) => l.key).join(', ')})`);
}
