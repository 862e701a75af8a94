/**
 * Leases in memory for the single-node coordination (local.ts): leadership of a task and
 * ownership of a backlog's part, each under one name. What a cluster keeps as a lease row
 * (name, owner, generation, expires_at) is a Map entry here, and what PostgreSQL makes atomic
 * with a conditional upsert is atomic here because a take runs without an await.
 *
 * Time is monotonic (Clock.monotonic): a lease measures an interval, which a step of the wall
 * clock must neither stretch nor cut.
 */
import type { Lease } from './port.js';

interface Entry {
  generation: number;
  expiresAt: number;
}

export interface LeaseTableOptions {
  /** The node every lease of this table belongs to. */
  owner: string;
  /** Monotonic milliseconds. */
  now: () => number;
}

/** Entries kept before expired ones are dropped (names of finished broadcasts, say). */
const PRUNE_ABOVE = 1024;

export class LeaseTable {
  private readonly entries = new Map<string, Entry>();
  /**
   * One counter for every name: a name's generations still only grow (each grant takes the
   * next value), even when its entry was dropped after a release.
   */
  private lastGeneration = 0;

  constructor(private readonly o: LeaseTableOptions) {}

  /** A lease on `name` for ttlMs, or null while a live one is held (by anyone, this node included). */
  take(name: string, ttlMs: number): Lease | null {
    if (!Number.isFinite(ttlMs) || ttlMs <= 0) throw new Error(`lease ttl must be positive, got ${ttlMs}`);
    const now = this.o.now();
    const held = this.entries.get(name);
    if (held && held.expiresAt > now) return null;
    if (this.entries.size > PRUNE_ABOVE) this.prune(now);
    const entry = { generation: ++this.lastGeneration, expiresAt: now + ttlMs };
    this.entries.set(name, entry);
    return this.handle(name, entry.generation, ttlMs);
  }

  /** True while `name` has a live lease (tests, metrics). */
  isHeld(name: string): boolean {
    const e = this.entries.get(name);
    return e !== undefined && e.expiresAt > this.o.now();
  }

  private handle(name: string, generation: number, ttlMs: number): Lease {
    const mine = (): Entry | undefined => {
      const e = this.entries.get(name);
      return e?.generation === generation ? e : undefined;
    };
    return {
      name,
      owner: this.o.owner,
      generation,
      // Still ours while nobody took it over: an expired lease that no one took is renewed.
      renew: async () => {
        const e = mine();
        if (e) e.expiresAt = this.o.now() + ttlMs;
        return e !== undefined;
      },
      release: async () => {
        if (mine()) this.entries.delete(name);
      },
    };
  }

  private prune(now: number): void {
    for (const [name, e] of this.entries) if (e.expiresAt <= now) this.entries.delete(name);
  }
}
