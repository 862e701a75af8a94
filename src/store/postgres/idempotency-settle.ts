/**
 * The waits of IdempotencyPort.settled in this process: a claim released here wakes the
 * requests waiting for its key at once; otherwise each wait ends after its timeout, and
 * settled() looks at the database again (a claim held on another node). Not a cache: it holds no
 * state the database does not, only pending timers.
 */
import type { IdempotencyKey } from '../port/idempotency.js';

export class SettleWaiters {
  private readonly waiting = new Map<string, Set<() => void>>();

  /** Resolves when wake(key) runs here, or after timeoutMs. */
  wait(key: IdempotencyKey, timeoutMs: number): Promise<void> {
    const slot = slotOf(key);
    return new Promise<void>((resolve) => {
      let set = this.waiting.get(slot);
      if (!set) this.waiting.set(slot, (set = new Set()));
      const done = (): void => {
        clearTimeout(timer);
        set.delete(done);
        if (set.size === 0 && this.waiting.get(slot) === set) this.waiting.delete(slot);
        resolve();
      };
      const timer = setTimeout(done, Math.max(1, timeoutMs));
      set.add(done);
    });
  }

  wake(key: IdempotencyKey): void {
    for (const done of [...(this.waiting.get(slotOf(key)) ?? [])]) done();
  }
}

function slotOf(k: IdempotencyKey): string {
  return `${k.accountId}\u0000${k.key}`;
}
