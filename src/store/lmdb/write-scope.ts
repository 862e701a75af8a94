/**
 * Work that writes defer to their end. The event log's meta values (eventSeq, eventClockMs) and
 * the statistics counters change with every event, and a write that appends many events (a
 * broadcast batch of 200 messages appends 400) would read, decode, re-encode and rewrite the same
 * few records hundreds of times. Instead each is read once, changed here, and written once.
 *
 * Scopes nest. The writes of one group commit (store/write-batch.ts) each run in a scope of their
 * own whose parent is the group's scope: a write that succeeds merges what it deferred into the
 * group's (its counters' deltas added, the log's seq carried on), one that throws discards it
 * with the rest of its child transaction, and the group's scope is written once, after the last
 * of its writes, in the same LMDB transaction. So twenty sends of one commit write the counters
 * of their quarter hour once, not twenty times. A part that has no merge is written at the end of
 * its own write, as before.
 *
 * A leaf module: env.ts and write-batch.ts make the scopes, the verbs (events.ts, stats.ts,
 * stats-rollup.ts) fill them.
 */
interface Part {
  state: unknown;
  flush: (state: unknown) => void;
  merge?: (into: unknown, from: unknown) => void;
}

/** How a part of a scope is made, written and (optionally) merged into the same part of the parent scope. */
export interface PartSpec<T> {
  /** The part's state in a scope that does not have it yet; `above`: the same part's state in the nearest enclosing scope that has it. */
  init: (above: T | undefined) => T;
  flush: (state: T) => void;
  /** Adds a finished child write's state to its parent's: the parent then writes both at once. */
  merge?: (into: T, from: T) => void;
}

export class WriteScope {
  private readonly parts = new Map<string, Part>();
  /** The first error of a write started inside this one that threw (see settled). */
  private nestedFailure: { error: unknown } | null = null;

  /** parent: the scope of the group commit this write belongs to (or of the write it runs inside). */
  constructor(private readonly parent: WriteScope | null = null) {}

  /** The state of part `name` in this write: made by spec.init on first use, written or merged at the end. */
  part<T>(name: string, spec: PartSpec<T>): T {
    let p = this.parts.get(name);
    if (!p) {
      const above = this.parent?.peek<T>(name);
      p = { state: spec.init(above), flush: spec.flush as Part['flush'], merge: spec.merge as Part['merge'] };
      this.parts.set(name, p);
    }
    return p.state as T;
  }

  /** The newest state of part `name` in this scope or an enclosing one (readers that must see deferred values). */
  peek<T>(name: string): T | undefined {
    const own = this.parts.get(name);
    return own ? (own.state as T) : this.parent?.peek<T>(name);
  }

  /**
   * The write ended well: what it deferred goes to the parent when the part can merge, else it is
   * written now, in the order the parts were first used.
   */
  finish(): void {
    for (const [name, p] of this.parts) {
      if (!this.parent || !p.merge) {
        p.flush(p.state);
        continue;
      }
      const into = this.parent.parts.get(name);
      if (into) p.merge(into.state, p.state);
      else this.parent.parts.set(name, p);
    }
    this.parts.clear();
  }

  /** A write started inside this one threw (its own child transaction is rolled back). */
  nestedFailed(error: unknown): void {
    this.nestedFailure ??= { error };
  }

  /**
   * This write's callback returned `value`. lmdb-js awaited a promise returned by a callback and
   * rolled the callback's transaction back if it rejected; a write's callback is synchronous, so
   * the promises it can return are lmdb-js's own already settled results of a put, or a nested
   * write's, which settles as that write ran: a write that returns a promise while a write
   * started inside it threw is rolled back with that error, as lmdb-js did.
   */
  settled<T>(value: T): T {
    const thenable = typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';
    if (thenable && this.nestedFailure) {
      // The promise rejects with the error thrown here; lmdb-js awaited it, so nothing else handles it.
      (value as unknown as PromiseLike<unknown>).then(undefined, () => {});
      throw this.nestedFailure.error;
    }
    return value;
  }

  /** Writes everything deferred here (the group's scope at its end, or a write without a parent). */
  flush(): void {
    for (const p of this.parts.values()) p.flush(p.state);
    this.parts.clear();
  }
}
