/**
 * Expiring entries in PostgreSQL (port.ts, ExpiringEntries): one row per (name, key) in
 * coord_entries with the caller's value and its expiry (epoch ms of the wall clock, given by
 * the caller: port.ts says why). set() is one upsert, list() one indexed read, delete() one
 * DELETE ... RETURNING; the janitor drops the rows that expired (janitor.ts).
 */
import type { ExpiringEntries, SharedEntry } from '../port.js';
import type { Sql } from './connection.js';

export class PgExpiringEntries implements ExpiringEntries {
  constructor(
    private readonly sql: Sql,
    private readonly name: string,
  ) {}

  async set(key: string, value: string, until: number): Promise<void> {
    await this.sql`
      INSERT INTO coord_entries (name, key, value, until_ms) VALUES (${this.name}, ${key}, ${value}, ${until}::float8)
      ON CONFLICT (name, key) DO UPDATE SET value = excluded.value, until_ms = excluded.until_ms`;
  }

  async list(now: number): Promise<SharedEntry[]> {
    const rows = await this.sql<{ key: string; value: string; until_ms: number }[]>`
      SELECT key, value, until_ms FROM coord_entries WHERE name = ${this.name} AND until_ms > ${now}::float8 ORDER BY key`;
    return rows.map((r) => ({ key: r.key, value: r.value, until: Number(r.until_ms) }));
  }

  async delete(key: string, now: number): Promise<boolean> {
    const rows = await this.sql<{ until_ms: number }[]>`DELETE FROM coord_entries WHERE name = ${this.name} AND key = ${key} RETURNING until_ms`;
    return rows.length > 0 && Number(rows[0]!.until_ms) > now;
  }
}
