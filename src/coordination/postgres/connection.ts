/**
 * The coordination's own connections to PostgreSQL (postgres.js, as the store engine's pool:
 * store/postgres/client.ts, which a coordination may not import): a small pool for the
 * asynchronous methods (leases, keyed limits, failure windows, slots, NOTIFY), the LISTEN
 * connection postgres.js opens beside it, and the rate bridge's one connection in its worker
 * thread (bridge.ts). Every connection uses the coordination's schema, where its tables live
 * beside the store's.
 */
import postgres from 'postgres';
import { reconnectBackoff } from '../../domain/database-unavailable.js';
import { textWithoutNul } from '../../domain/postgres-text.js';

export type Sql = postgres.Sql;

export interface ConnectionOptions {
  url: string;
  /** The schema the coordination's tables live in (the store's). */
  schema: string;
  /** Shown in pg_stat_activity: the node id, so an operator sees whose connection it is. */
  applicationName: string;
}

const INT8_OID = 20;
const TEXT_OID = 25;
const VARCHAR_OID = 1043;

/** What every coordination connection sets on connecting (plain data: the bridge's worker gets it too). */
export function connectionSettings(o: ConnectionOptions): Record<string, string> {
  return { application_name: o.applicationName, search_path: o.schema };
}

/**
 * The bridge's connection (rates and pacer) commits without waiting for the WAL flush: its
 * rows are short-lived state that a database crash may take back by a few milliseconds (a
 * budget then allows those starts once more), and the event loop waits for each of its
 * statements, so a flush would cost every node's loop a disk sync per reservation. Leases
 * keep the server's setting (the pool's).
 */
export function bridgeSettings(o: ConnectionOptions): Record<string, string> {
  return { ...connectionSettings(o), synchronous_commit: 'off' };
}

/**
 * Keyed limits and failure windows (API-key buckets, invalid-key and SMTP AUTH limits) are
 * written on every request, and slot holds twice per delivery attempt (taken, given back):
 * waiting for their WAL flush added a disk sync to each send and two to each delivery (bench
 * cluster, issue 32). A database crash may take the last milliseconds of them back, which lets a
 * client a few more requests or AUTH tries once, or a site one more session for a moment: limits,
 * not records. So their pool commits without waiting for the flush, as the bridge does; leases
 * keep the server's setting.
 */
export function volatileSettings(o: ConnectionOptions): Record<string, string> {
  return { ...connectionSettings(o), synchronous_commit: 'off' };
}

export function openPool(o: ConnectionOptions, max: number, settings: Record<string, string> = connectionSettings(o)): Sql {
  return postgres(o.url, {
    max,
    onnotice: false,
    connect_timeout: 10,
    // Back within a second of the server (domain/database-unavailable.ts), as the store's pool.
    backoff: reconnectBackoff,
    idle_timeout: 60,
    // Lease generations are int8 (a sequence): far below 2^53, read as numbers.
    types: {
      int8: { to: INT8_OID, from: [INT8_OID], serialize: (v: number) => String(v), parse: (v: string) => Number(v) },
      // U+0000 becomes U+FFFD (domain/postgres-text.ts): keyed limits, failure windows and
      // counters encode their keys first (index.ts, dbKey), but an expiring entry's key (a path
      // parameter of DELETE /ops/sources/{source}/shaping/{site}) or a slot's DNS name is sent as
      // it came; stored keys keep their form, so nodes of the previous release meet the same rows.
      text: { to: TEXT_OID, from: [TEXT_OID, VARCHAR_OID], serialize: textWithoutNul },
    },
    connection: settings,
  });
}

/** A quoted identifier for the schema (it comes from configuration, never from a client). */
export function ident(name: string): string {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name)) throw new Error(`invalid PostgreSQL schema name "${name}" (lowercase letters, digits and _; at most 63)`);
  return `"${name}"`;
}

/** The SQLSTATE of a PostgreSQL error, if it is one. */
export function sqlState(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string' ? err.code : undefined;
}
