/**
 * Token buckets per key in PostgreSQL (port.ts, KeyedRate): key-buckets.ts's bucket, one row
 * per (name, key) in coord_key_buckets, taken with one INSERT ... ON CONFLICT DO UPDATE that
 * refills and takes in SQL. The conflicting row is locked and the refill read from its latest
 * version, so two nodes taking the last token cannot both get it; the first request of a key
 * inserts a full bucket less one.
 *
 * full_at_ms (when the bucket is full again) lets the janitor drop buckets that hold nothing
 * (janitor.ts), as key-buckets.ts prunes full ones.
 */
import type { KeyedRate, KeyedRateOptions, RateDecision } from '../port.js';
import type { Sql } from './connection.js';
import type { CoordinationTime } from './time.js';

export class PgKeyedRate implements KeyedRate {
  private readonly perMs: number;

  constructor(
    private readonly sql: Sql,
    private readonly name: string,
    private readonly o: KeyedRateOptions,
    private readonly time: CoordinationTime,
  ) {
    if (!(o.limit > 0) || !(o.windowMs > 0)) throw new Error(`a keyed rate needs a positive limit and window, got ${o.limit} per ${o.windowMs} ms`);
    this.perMs = o.limit / o.windowMs;
  }

  async take(key: string): Promise<RateDecision> {
    const { limit } = this.o;
    const now = this.time.query();
    // The bucket refilled to the row's new time (never before its last: a clock stepped back
    // counts as no time passing, as in key-buckets.ts).
    const refilled = this.sql`least(${limit}::float8, b.tokens + greatest(0, coord_now(${now}::float8) - b.at_ms) * ${this.perMs}::float8)`;
    const [row] = await this.sql<{ tokens: number; allowed: boolean }[]>`
      INSERT INTO coord_key_buckets AS b (name, key, tokens, at_ms, allowed, full_at_ms)
      VALUES (${this.name}, ${key}, ${limit}::float8 - CASE WHEN ${limit}::float8 >= 1 THEN 1 ELSE 0 END,
              coord_now(${now}::float8), ${limit}::float8 >= 1, coord_now(${now}::float8) + 1 / ${this.perMs}::float8)
      ON CONFLICT (name, key) DO UPDATE SET
        allowed = ${refilled} >= 1,
        tokens = ${refilled} - CASE WHEN ${refilled} >= 1 THEN 1 ELSE 0 END,
        at_ms = greatest(b.at_ms, coord_now(${now}::float8)),
        full_at_ms = greatest(b.at_ms, coord_now(${now}::float8)) + (${limit}::float8 - (${refilled} - CASE WHEN ${refilled} >= 1 THEN 1 ELSE 0 END)) / ${this.perMs}::float8
      RETURNING tokens, allowed`;
    return this.decision(row!.tokens, row!.allowed);
  }

  /** The RateLimit-* answer, as key-buckets.ts words it. */
  private decision(tokens: number, allowed: boolean): RateDecision {
    const { limit } = this.o;
    const missing = allowed ? limit - tokens : 1 - tokens;
    return { allowed, limit, remaining: Math.floor(tokens), resetSeconds: Math.max(1, Math.ceil(missing / this.perMs / 1000)) };
  }
}
