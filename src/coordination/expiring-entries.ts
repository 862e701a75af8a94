/**
 * Expiring entries in one process (local.ts's entries()): a Map per name. An expired entry is
 * dropped when it is next read or written, as the PostgreSQL janitor drops its rows.
 */
import type { ExpiringEntries, SharedEntry } from './port.js';

/** Entries kept per name at most: past it, the one that ends first is dropped (a bound, never reached by shaping). */
const MAX_ENTRIES = 100_000;

export class LocalExpiringEntries implements ExpiringEntries {
  private readonly entries = new Map<string, SharedEntry>();

  async set(key: string, value: string, until: number): Promise<void> {
    this.entries.set(key, { key, value, until });
    if (this.entries.size > MAX_ENTRIES) this.dropFirstEnding();
  }

  async list(now: number): Promise<SharedEntry[]> {
    const live: SharedEntry[] = [];
    for (const e of this.entries.values()) {
      if (e.until > now) live.push({ ...e });
      else this.entries.delete(e.key);
    }
    return live;
  }

  async delete(key: string, now: number): Promise<boolean> {
    const e = this.entries.get(key);
    this.entries.delete(key);
    return e !== undefined && e.until > now;
  }

  private dropFirstEnding(): void {
    let first: SharedEntry | undefined;
    for (const e of this.entries.values()) if (!first || e.until < first.until) first = e;
    if (first) this.entries.delete(first.key);
  }
}
