/**
 * Drops the coordination's rows that no longer mean anything, every JANITOR_EVERY_MS on each
 * node (the deletes are idempotent, so nodes need not agree on who runs them): buckets full
 * again, failure windows all of whose failures left the window, slot rows all of whose holds
 * expired, expiring entries past their end, counters whose window ended, and leases expired
 * for a while. The in-memory implementation prunes the same
 * entries (key-buckets.ts, failure-windows.ts, leases.ts). Each delete is an index range on
 * its expiry column.
 *
 * A lease row is kept LEASE_KEPT_MS after it expired, so that a holder late with its renewal
 * still finds it (port.ts: an expired lease nobody took is still renewed); its generation need
 * not be kept, as generations come from one sequence (leases.ts).
 */
import type { Sql } from './connection.js';
import type { CoordinationTime } from './time.js';

export const JANITOR_EVERY_MS = 5 * 60_000;
const LEASE_KEPT_MS = 60 * 60_000;

export async function sweep(sql: Sql, time: CoordinationTime): Promise<void> {
  const now = time.query();
  await sql`DELETE FROM coord_key_buckets WHERE full_at_ms <= coord_now(${now}::float8)`;
  await sql`DELETE FROM coord_failures WHERE expires_at_ms <= coord_now(${now}::float8)`;
  await sql`DELETE FROM coord_slots WHERE expires_at_ms <= coord_now(${now}::float8)`;
  await sql`DELETE FROM coord_entries WHERE until_ms <= coord_now(${now}::float8)`;
  await sql`DELETE FROM coord_counters WHERE expires_at_ms <= coord_now(${now}::float8)`;
  await sql`DELETE FROM coord_leases WHERE expires_at_ms <= coord_now(${now}::float8) - ${LEASE_KEPT_MS}::float8`;
}
