/**
 * Wake-ups within one process (local.ts): wake(topic) calls the topic's listeners at once, in
 * the order they subscribed, as the dispatchers' notify() and the store's OutboxSignal do today
 * (store/lmdb/outbox-signal.ts). A listener only schedules work (WorkLoop.kick defers its round
 * to the next turn), so calling it synchronously costs the waker nothing, and its failure is
 * reported, never thrown back at the waker, whose write has committed already.
 */
import type { WakeTopic } from './port.js';

export class LocalWakeups {
  private readonly listeners = new Map<WakeTopic, Set<() => void>>();

  constructor(private readonly onListenerError: (err: unknown, topic: WakeTopic) => void = () => {}) {}

  wake(topic: WakeTopic): void {
    const set = this.listeners.get(topic);
    if (!set) return;
    for (const fn of [...set]) {
      try {
        fn();
      } catch (err) {
        this.onListenerError(err, topic);
      }
    }
  }

  /** Returns the unsubscribe function. */
  onWake(topic: WakeTopic, fn: () => void): () => void {
    let set = this.listeners.get(topic);
    if (!set) this.listeners.set(topic, (set = new Set()));
    // A wrapper per subscription: the same function subscribed twice is called twice and
    // unsubscribed once per subscription.
    const entry = () => fn();
    set.add(entry);
    return () => {
      set.delete(entry);
    };
  }
}
