/**
 * Claims of one idempotency key made in this process reach the database one after the other,
 * in call order: which of two racing requests does the work is then decided by which came first
 * (as LMDB's synchronous claim decides), not by which pooled connection happened to be faster.
 * Claims from other nodes still race in the database, where the insert-if-absent decides
 * (idempotency-claim.ts). Holds only the tail of each key's chain while a claim is running.
 */
export class KeyedOrder {
  private readonly tails = new Map<string, Promise<unknown>>();

  run<T>(slot: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.tails.get(slot) ?? Promise.resolve();
    const result = prev.then(fn);
    const tail = result.catch(() => undefined);
    this.tails.set(slot, tail);
    void tail.then(() => {
      if (this.tails.get(slot) === tail) this.tails.delete(slot);
    });
    return result;
  }
}
