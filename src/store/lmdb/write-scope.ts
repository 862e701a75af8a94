/**
 * Work that one write's callback defers to its end. The event log's meta values (eventSeq,
 * eventClockMs) and the statistics counters change with every event, and a write that appends
 * many events (a broadcast batch of 200 messages appends 400) would read, decode, re-encode and
 * rewrite the same few records hundreds of times. Instead each is read once, changed here, and
 * written once when the callback returns: Store.write runs flush() as the callback's last step,
 * inside the same child transaction, so a callback that throws discards what it deferred along
 * with everything else it wrote.
 *
 * A leaf module: env.ts makes one per write, the verbs (events.ts, stats.ts) fill it.
 */
interface Part {
  state: unknown;
  flush: (state: unknown) => void;
}

export class WriteScope {
  private readonly parts = new Map<string, Part>();

  /** The state of part `name` in this write: made by init on first use, handed to flush at the end. */
  part<T>(name: string, init: () => T, flush: (state: T) => void): T {
    let p = this.parts.get(name);
    if (!p) this.parts.set(name, (p = { state: init(), flush: flush as (state: unknown) => void }));
    return p.state as T;
  }

  /** The state of part `name` if this write made it (readers that must see deferred values). */
  peek<T>(name: string): T | undefined {
    return this.parts.get(name)?.state as T | undefined;
  }

  /** Writes what was deferred, in the order the parts were first used. */
  flush(): void {
    for (const p of this.parts.values()) p.flush(p.state);
    this.parts.clear();
  }
}
