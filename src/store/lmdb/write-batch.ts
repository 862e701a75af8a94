/**
 * The group commit's callbacks as one. Every Store.write() started before lmdb-js runs the
 * pending callbacks joins one group: the group is a single lmdb-js child transaction whose
 * callback runs each write in a child transaction of its own (a write that throws rolls back
 * alone and rejects alone, as before) and then writes, once, what the group's writes deferred
 * (write-scope.ts: counters, the event log's meta). Durability is lmdb-js's as before: the group
 * is part of one LMDB commit, and every write of it resolves once that commit is synced.
 *
 * Why: twenty sends in one commit bumped the same statistics records (day, quarter hour, the
 * rollup's three grains for the channel and the account) and the event log's meta twenty times,
 * each a read, a decode, an encode and a put; now once.
 */
import { WriteScope } from './write-scope.js';

/** The transaction calls the group needs of lmdb-js (RootDatabase.childTransaction). */
export interface ChildTransactions {
  childTransaction(fn: () => unknown): Promise<unknown> | unknown;
}

interface Member {
  fn: () => unknown;
  ok: boolean;
  value: unknown;
}

export class WriteGroup {
  private readonly members: Member[] = [];
  /** Settles once the group's LMDB commit is synced (or failed); set by the first write. */
  private committed: Promise<unknown> | null = null;

  /** `enter`: runs a step with the given scope as the store's current one; `closed`: the group takes no more writes. */
  constructor(
    private readonly root: ChildTransactions,
    private readonly enter: <T>(scope: WriteScope, step: () => T) => T,
    private readonly closed: () => void,
  ) {}

  /**
   * Adds a write to the group; resolves with its result, or rejects with its own error, once the
   * group is committed. The first write queues the group's callback, which lmdb-js runs with the
   * other callbacks of its next batch.
   */
  async add<T>(fn: () => T): Promise<T> {
    const m: Member = { fn, ok: false, value: undefined };
    this.members.push(m);
    this.committed ??= Promise.resolve(this.root.childTransaction(() => this.run()));
    await this.committed;
    if (!m.ok) throw m.value;
    return m.value as T;
  }

  /** Inside lmdb-js's batch: each write in its own child transaction and scope, then the group's deferred work. */
  private run(): void {
    // From here on a new write starts the next group (it may still join this LMDB batch).
    this.closed();
    if (this.members.length === 1) return this.runAlone(this.members[0]!);
    const group = new WriteScope();
    for (const m of this.members) {
      try {
        // Boxed: lmdb-js would wait for a returned promise (a put's result) and end the child
        // transaction after this loop has moved on.
        const box = this.root.childTransaction(() => {
          const own = new WriteScope(group);
          const value = own.settled(this.enter(own, m.fn));
          this.enter(own, () => own.finish());
          return { value };
        }) as { value: unknown };
        m.value = box.value;
        m.ok = true;
      } catch (err) {
        m.value = err;
      }
    }
    this.enter(group, () => group.flush());
  }

  /**
   * A group of one (most writes when the daemon is not busy): the group's child transaction is
   * the write's own, so no second one is nested in it (a nested commit merges its pages into its
   * parent's, a cost per page). Its error rolls the group back and rejects it: only this write.
   */
  private runAlone(m: Member): void {
    const own = new WriteScope();
    m.value = own.settled(this.enter(own, m.fn));
    this.enter(own, () => own.flush());
    m.ok = true;
  }
}
