/**
 * Failures per key in a sliding window in PostgreSQL (port.ts, FailureWindow): failure-windows.ts's
 * counting, one row per (name, key) in coord_failures holding the times of the key's last
 * `limit` failures. add() is one INSERT ... ON CONFLICT DO UPDATE that keeps the times still in
 * the window, appends now and keeps the newest `limit` (the row is locked, so failures reported
 * at once on several nodes are all kept); reached() reads the row; clear() deletes it.
 *
 * expires_at_ms (the newest failure's time + the window) lets the janitor drop rows whose
 * failures all left the window (janitor.ts), as failure-windows.ts prunes its keys.
 */
import type { FailureWindow, FailureWindowOptions } from '../port.js';
import type { Sql } from './connection.js';
import type { CoordinationTime } from './time.js';

export class PgFailureWindow implements FailureWindow {
  constructor(
    private readonly sql: Sql,
    private readonly name: string,
    private readonly o: FailureWindowOptions,
    private readonly time: CoordinationTime,
  ) {
    if (!(o.limit > 0) || !(o.windowMs > 0)) throw new Error(`a failure window needs a positive limit and window, got ${o.limit} per ${o.windowMs} ms`);
  }

  async reached(key: string): Promise<boolean> {
    const [row] = await this.sql<{ n: number }[]>`
      SELECT count(*)::int4 AS n FROM coord_failures f, unnest(f.times) AS x
      WHERE f.name = ${this.name} AND f.key = ${key} AND x > coord_now(${this.time.query()}::float8) - ${this.o.windowMs}::float8`;
    return (row?.n ?? 0) >= this.o.limit;
  }

  async add(key: string): Promise<void> {
    const now = this.time.query();
    const { limit, windowMs } = this.o;
    await this.sql`
      INSERT INTO coord_failures AS f (name, key, times, expires_at_ms)
      VALUES (${this.name}, ${key}, ARRAY[coord_now(${now}::float8)], coord_now(${now}::float8) + ${windowMs}::float8)
      ON CONFLICT (name, key) DO UPDATE SET
        times = ARRAY(
          SELECT x FROM (
            SELECT x FROM unnest(f.times || coord_now(${now}::float8)) AS x
            WHERE x > coord_now(${now}::float8) - ${windowMs}::float8
            ORDER BY x DESC LIMIT ${Math.ceil(limit)}::int4
          ) newest ORDER BY x),
        expires_at_ms = coord_now(${now}::float8) + ${windowMs}::float8`;
  }

  async clear(key: string): Promise<void> {
    await this.sql`DELETE FROM coord_failures WHERE name = ${this.name} AND key = ${key}`;
  }
}
