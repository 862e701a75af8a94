/**
 * What every repo of the PostgreSQL engine shares: the pool, transactions with the retry
 * PostgreSQL's concurrency asks for, and the engine-kept views the port needs synchronously.
 * Repos get it from the engine (engine.ts); nothing outside store/postgres/ sees it.
 */
import type { Db, Sql, Tx } from './client.js';

/** SQLSTATEs after which the whole transaction may simply run again (nothing of it committed). */
const RETRYABLE = new Set([
  '40001', // serialization_failure
  '40P01', // deadlock_detected
]);
const MAX_TRIES = 5;

export class PgContext {
  /**
   * Channels whose deletion resolved on this node or was announced by another one (NOTIFY):
   * QueuePort.channelDeleted answers from it in the same turn (store/port/index.ts).
   */
  readonly deletedChannels = new Set<string>();

  constructor(
    private pool: Sql,
    /** The schema the tables live in. */
    readonly schema: string,
  ) {}

  /**
   * The pool, as one stable object that forwards to the current pool: a store stopped and started
   * again (GET /ready's reopen) has a new pool, and the repos that keep `ctx.sql` use it too.
   */
  readonly sql: Sql = forwardingSql(() => this.pool);

  /** A started-again store's new pool (engine.ts). */
  usePool(pool: Sql): void {
    this.pool = pool;
  }

  /**
   * Runs fn in one transaction (READ COMMITTED unless fn sets otherwise) and resolves once it
   * committed durably. A serialization failure or deadlock runs fn again from the start, so fn
   * must not have effects outside the transaction before it resolves.
   */
  async begin<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return (await this.sql.begin((tx) => fn(tx))) as T;
      } catch (err) {
        if (attempt >= MAX_TRIES || !RETRYABLE.has(sqlState(err))) throw err;
      }
    }
  }

  /** The pool, for single statements that need no transaction. */
  get db(): Db {
    return this.sql;
  }
}

function forwardingSql(current: () => Sql): Sql {
  const target = function forwarding() {} as unknown as Sql;
  return new Proxy(target, {
    apply: (_t, _this, args: unknown[]) => Reflect.apply(current() as unknown as (...a: unknown[]) => unknown, undefined, args),
    get: (_t, prop) => {
      const pool = current();
      const value: unknown = Reflect.get(pool, prop, pool);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(pool) : value;
    },
  });
}

/** A failure after which the whole transaction may run again (nothing of it committed). */
export function isRetryable(err: unknown): boolean {
  return RETRYABLE.has(sqlState(err));
}

export function sqlState(err: unknown): string {
  return typeof err === 'object' && err !== null && 'code' in err && typeof (err as { code: unknown }).code === 'string'
    ? (err as { code: string }).code
    : '';
}
