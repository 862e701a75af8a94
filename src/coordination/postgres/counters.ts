/**
 * Counters per key in PostgreSQL (port.ts, Counters): one row per (name, key) in coord_counters
 * with its count and its expiry. add() is one transaction: it inserts the missing rows at 0,
 * locks every row of the set in key order (two adds of overlapping sets wait for each other
 * instead of deadlocking), reads each count (0 once its key expired), and adds 1 to all of them
 * only when each stays within its cap. Racing adders on every node are serialized by the row
 * locks, so together they never pass a cap.
 *
 * An expired row reads 0 and is reset by the next add; the janitor drops the rest (janitor.ts).
 */
import type { CounterAnswer, CounterLimit, Counters } from '../port.js';
import { distinct } from '../counters.js';
import type { Sql } from './connection.js';
import type { CoordinationTime } from './time.js';

export class PgCounters implements Counters {
  constructor(
    private readonly sql: Sql,
    private readonly name: string,
    private readonly time: CoordinationTime,
    /** The key as a text column holds it, and back (index.ts: NUL-safe). */
    private readonly dbKey: (key: string) => string,
    private readonly fromDbKey: (key: string) => string,
  ) {}

  async add(limits: readonly CounterLimit[]): Promise<CounterAnswer> {
    distinct(limits);
    const keys = limits.map((l) => this.dbKey(l.key));
    const ttls = limits.map((l) => l.ttlMs);
    const now = this.time.query();
    const found = await this.sql.begin(async (tx) => {
      await tx`
        INSERT INTO coord_counters (name, key, n, expires_at_ms)
        SELECT ${this.name}, u.key, 0, coord_now(${now}::float8) + u.ttl
        FROM unnest(${keys}::text[], ${ttls}::float8[]) AS u(key, ttl) ORDER BY u.key
        ON CONFLICT (name, key) DO NOTHING`;
      const rows = await tx<{ key: string; n: number }[]>`
        SELECT key, CASE WHEN expires_at_ms > coord_now(${now}::float8) THEN n ELSE 0 END AS n
        FROM coord_counters WHERE name = ${this.name} AND key = ANY(${keys}::text[])
        ORDER BY key FOR UPDATE`;
      const counts = new Map(rows.map((r) => [r.key, r.n]));
      const before = keys.map((k) => counts.get(k) ?? 0);
      if (limits.some((l, i) => before[i]! + 1 > l.cap)) return { added: false, counts: before };
      await tx`
        UPDATE coord_counters c SET
          n = CASE WHEN c.expires_at_ms > coord_now(${now}::float8) THEN c.n ELSE 0 END + 1,
          expires_at_ms = coord_now(${now}::float8) + u.ttl
        FROM unnest(${keys}::text[], ${ttls}::float8[]) AS u(key, ttl)
        WHERE c.name = ${this.name} AND c.key = u.key`;
      return { added: true, counts: before.map((n) => n + 1) };
    });
    return found;
  }

  async read(): Promise<Map<string, number>> {
    const rows = await this.sql<{ key: string; n: number }[]>`
      SELECT key, n FROM coord_counters
      WHERE name = ${this.name} AND expires_at_ms > coord_now(${this.time.query()}::float8) AND n > 0`;
    return new Map(rows.map((r) => [this.fromDbKey(r.key), r.n]));
  }
}
