/**
 * The signal from the store to the webhook dispatcher that a transaction put outbox entries
 * (store/webhook-outbox.ts), so the dispatcher looks at once instead of at its next wake-up.
 *
 * An explicit object, made by each Store (store.outbox), notified by the Store's outbox writer
 * and subscribed to by the dispatcher given that Store. A Store without a dispatcher (the CLI,
 * tests of the store alone) has one that nobody listens to: a process without a dispatcher
 * leaves its entries to the one of the daemon, which finds them at its idle check.
 */
export class OutboxSignal {
  private readonly listeners = new Set<() => void>();

  /** Returns the unsubscribe function. */
  subscribe(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /**
   * Runs inside the writing transaction, before its commit: a listener must only schedule work
   * (the dispatcher reads the outbox inside a later write transaction, which sees every earlier
   * one), and its failure must not roll back the event.
   */
  notify(): void {
    for (const fn of this.listeners) {
      try {
        fn();
      } catch {
        /* a listener only schedules work */
      }
    }
  }
}
