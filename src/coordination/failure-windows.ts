/**
 * Failures per key in a sliding window, in one process (local.ts's failures()): the times of a
 * key's last `limit` failures; the key is blocked while all of them lie within windowMs. This is
 * the counting SMTP AUTH's throttle (smtp/throttle.ts) has always done, moved behind the port
 * unchanged so that a cluster can share it.
 *
 * Time is monotonic (performance.now by default): the windows are intervals. On Date.now a step
 * back of an hour kept the failures before it counted for the hour, so an address stayed
 * refused that long.
 */
import type { FailureWindow } from './port.js';

export interface FailureWindowsOptions {
  limit: number;
  windowMs: number;
  now: () => number;
}

/** Above this many tracked keys, keys without recent failures are dropped. */
const MAX_KEYS = 50_000;

export class LocalFailureWindow implements FailureWindow {
  private readonly events = new Map<string, number[]>();

  constructor(private readonly o: FailureWindowsOptions) {
    if (!(o.limit > 0) || !(o.windowMs > 0)) throw new Error(`a failure window needs a positive limit and window, got ${o.limit} per ${o.windowMs} ms`);
  }

  async reached(key: string): Promise<boolean> {
    return this.recent(key).length >= this.o.limit;
  }

  async add(key: string): Promise<void> {
    const list = this.recent(key);
    list.push(this.o.now());
    this.events.set(key, list.slice(-this.o.limit));
    if (this.events.size > MAX_KEYS) this.prune();
  }

  async clear(key: string): Promise<void> {
    this.events.delete(key);
  }

  private recent(key: string): number[] {
    const since = this.o.now() - this.o.windowMs;
    return (this.events.get(key) ?? []).filter((t) => t > since);
  }

  private prune(): void {
    for (const key of this.events.keys()) if (this.recent(key).length === 0) this.events.delete(key);
  }
}
