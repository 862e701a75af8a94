/**
 * Counted slots per key in one process (local.ts): the count of holds per key, as
 * delivery/site-concurrency.ts counts a site's sessions. An acquire checks and counts without
 * an await, so racing callers in this process cannot pass the limit together; a cluster does
 * the same with a row lock on the key (port.ts, Slots).
 */
import type { SlotHold, Slots } from './port.js';

export class LocalSlots implements Slots {
  private readonly counts = new Map<string, number>();

  async acquire(key: string, limit: number): Promise<SlotHold | null> {
    return this.tryAcquire(key, limit);
  }

  async held(key: string): Promise<number> {
    return this.count(key);
  }

  /** The synchronous form, for the local implementation's own callers. */
  tryAcquire(key: string, limit: number): SlotHold | null {
    const n = this.count(key);
    if (n >= limit) return null;
    this.counts.set(key, n + 1);
    let held = true;
    return {
      key,
      release: async () => {
        if (!held) return;
        held = false;
        const left = this.count(key) - 1;
        if (left > 0) this.counts.set(key, left);
        else this.counts.delete(key);
      },
    };
  }

  count(key: string): number {
    return this.counts.get(key) ?? 0;
  }
}
