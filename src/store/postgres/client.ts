/**
 * The PostgreSQL connection pool of the engine (postgres.js, chosen by bench/pg-driver.mjs:
 * bench/RESULTS.md "PostgreSQL driver: pg or postgres"). One place decides how values cross the
 * wire, so every repo reads the same shapes:
 *  - int8 (bigint, bigserial, count(*)) comes back as a JavaScript number: every int8 postrider
 *    keeps (seqs, milliseconds, counters) stays far below 2^53;
 *  - jsonb comes back parsed; repos pass records to it with sql.json();
 *  - every connection uses the engine's schema (search_path), JIT off and, when configured, a
 *    statement timeout, so that no query can hold PostgreSQL's xmin horizon for long;
 *  - U+0000 becomes U+FFFD in every text and json value sent: PostgreSQL's text and jsonb cannot
 *    hold NUL at all (LMDB can), and a rendered html part or an SMTP-submitted Subject may carry
 *    one. Without this, such a message would be refused with a 500 on every try; with it, the
 *    stored display copies show a replacement character, while the message itself (bytea) is
 *    stored byte for byte. Mail may not carry NUL anyway (RFC 5322 2.3, RFC 5321 4.1.2).
 */
import postgres from 'postgres';
import { reconnectBackoff } from '../../domain/database-unavailable.js';
import { textWithoutNul } from '../../domain/postgres-text.js';

export type Sql = postgres.Sql;
export type Tx = postgres.TransactionSql;
/** A pool or a transaction: what a tx-level helper runs its statements on. */
export type Db = postgres.Sql | postgres.TransactionSql;

export interface ClientOptions {
  url: string;
  /** The schema postrider's tables live in (default "postrider"). */
  schema: string;
  /** Connections in the pool. */
  poolSize: number;
  /** Milliseconds any statement may run before PostgreSQL cancels it; 0: no limit. */
  statementTimeoutMs: number;
  /** Shown in pg_stat_activity (the node id). */
  applicationName: string;
}

const INT8_OID = 20;
const TEXT_OID = 25;
const VARCHAR_OID = 1043;
const JSON_OID = 114;
const JSONB_OID = 3802;

/** A NUL escape of JSON text (after an even number of backslashes, so not an escaped "\\u0000"). */
const JSON_NUL = /(?<!\\)((?:\\\\)*)\\u0000/g;

export function jsonWithoutNul(value: unknown): string {
  return JSON.stringify(value).replace(JSON_NUL, '$1\\ufffd');
}

export function openClient(o: ClientOptions): Sql {
  return postgres(o.url, {
    max: o.poolSize,
    onnotice: false,
    // postgres.js retries a connection with backoff by itself; a query on a dead connection
    // fails at once so that a send answers 503 instead of waiting (issue 32, Faults). The
    // backoff is capped at a second, so the node serves again within one once the server is back.
    connect_timeout: 10,
    backoff: reconnectBackoff,
    idle_timeout: 60,
    types: {
      int8: { to: INT8_OID, from: [INT8_OID], serialize: (v: number) => String(v), parse: (v: string) => Number(v) },
      text: { to: TEXT_OID, from: [TEXT_OID, VARCHAR_OID], serialize: textWithoutNul },
      json: { to: JSONB_OID, from: [JSON_OID, JSONB_OID], serialize: jsonWithoutNul, parse: (v: string) => JSON.parse(v) as unknown },
    },
    connection: {
      application_name: o.applicationName,
      search_path: o.schema,
      // A verb resolves once durable (store/port/index.ts): never weaker than the server's default.
      synchronous_commit: 'on',
      // No JIT: the store's statements are short, and the planner prices some of them (a year of
      // Kolkata days from the statistics rollup: 735 index ranges per channel) far above
      // jit_above_cost, where compiling took 50 to 140 ms for a statement that runs in a few
      // (issue 36). A startup parameter costs nothing per statement.
      jit: 'off',
      ...(o.statementTimeoutMs > 0 ? { statement_timeout: o.statementTimeoutMs } : {}),
    },
  });
}

/** A quoted identifier (schema names come from config and tests, never from clients). */
export function ident(name: string): string {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name)) throw new Error(`invalid PostgreSQL schema name "${name}" (lowercase letters, digits and _; at most 63)`);
  return `"${name}"`;
}
