/**
 * The coordination's tables, in the store's schema beside the store's own (prefixed coord_),
 * and the SQL functions its statements call. Created at start by every node with IF NOT EXISTS
 * and CREATE OR REPLACE, under a transaction-scoped advisory lock named after the schema, so
 * that nodes starting at once create them once; this is not one of the store's migrations
 * (store/postgres/, which a coordination may not import), so a later change to these tables
 * must stay additive or bring its own step here.
 *
 * Times are float8 milliseconds on one clock for every node (time.ts): coord_now(p) is the
 * database's statement time, or p when a test passes its fake clock's.
 */
import { sqlState, ident, type Sql } from './connection.js';
import { HEARTBEATS_TABLE } from './heartbeats.js';
import { PACER_FUNCTION } from './pacer.js';
import { RATE_FUNCTIONS } from './rate-sql.js';

const TABLES = `
CREATE OR REPLACE FUNCTION coord_now(p float8) RETURNS float8 LANGUAGE sql STABLE
  AS $fn$ SELECT coalesce(p, extract(epoch FROM statement_timestamp()) * 1000) $fn$;

-- Leases (leases.ts): one row per task or backlog part; generations from one sequence.
CREATE SEQUENCE IF NOT EXISTS coord_lease_generations;
CREATE TABLE IF NOT EXISTS coord_leases (
  name text PRIMARY KEY,
  owner text NOT NULL,
  run text NOT NULL,
  generation int8 NOT NULL,
  expires_at_ms float8 NOT NULL
);
CREATE INDEX IF NOT EXISTS coord_leases_expiry ON coord_leases (expires_at_ms);

-- Shared attempt budgets (rate-sql.ts): the bucket per name, the window's starts per time.
CREATE TABLE IF NOT EXISTS coord_rates (
  name text PRIMARY KEY,
  tokens float8 NOT NULL,
  at_ms float8 NOT NULL
);
CREATE TABLE IF NOT EXISTS coord_rate_window (
  name text NOT NULL,
  at_ms float8 NOT NULL,
  n int4 NOT NULL,
  held int4 NOT NULL DEFAULT 0,
  PRIMARY KEY (name, at_ms)
);

-- Shared pacers (pacer.ts): GCRA's theoretical arrival time per name.
CREATE TABLE IF NOT EXISTS coord_pacers (
  name text PRIMARY KEY,
  tat float8 NOT NULL,
  at_ms float8 NOT NULL
);

-- Keyed limits (key-rates.ts): a token bucket per (name, key).
CREATE TABLE IF NOT EXISTS coord_key_buckets (
  name text NOT NULL,
  key text NOT NULL,
  tokens float8 NOT NULL,
  at_ms float8 NOT NULL,
  allowed boolean NOT NULL,
  full_at_ms float8 NOT NULL,
  PRIMARY KEY (name, key)
);
CREATE INDEX IF NOT EXISTS coord_key_buckets_full ON coord_key_buckets (full_at_ms);

-- Failure windows (failure-windows.ts): the last failures' times per (name, key).
CREATE TABLE IF NOT EXISTS coord_failures (
  name text NOT NULL,
  key text NOT NULL,
  times float8[] NOT NULL,
  expires_at_ms float8 NOT NULL,
  PRIMARY KEY (name, key)
);
CREATE INDEX IF NOT EXISTS coord_failures_expiry ON coord_failures (expires_at_ms);

-- Slots (slots.ts): the holds per (name, key), each hold's id to its expiry.
CREATE TABLE IF NOT EXISTS coord_slots (
  name text NOT NULL,
  key text NOT NULL,
  holds jsonb NOT NULL,
  expires_at_ms float8 NOT NULL,
  PRIMARY KEY (name, key)
);
CREATE INDEX IF NOT EXISTS coord_slots_expiry ON coord_slots (expires_at_ms);

-- Expiring entries (expiring-entries.ts): a value per (name, key) until its expiry (epoch ms).
CREATE TABLE IF NOT EXISTS coord_entries (
  name text NOT NULL,
  key text NOT NULL,
  value text NOT NULL,
  until_ms float8 NOT NULL,
  PRIMARY KEY (name, key)
);
CREATE INDEX IF NOT EXISTS coord_entries_expiry ON coord_entries (until_ms);

-- Counters (counters.ts): a count per (name, key) until the key's window ends.
CREATE TABLE IF NOT EXISTS coord_counters (
  name text NOT NULL,
  key text NOT NULL,
  n int4 NOT NULL,
  expires_at_ms float8 NOT NULL,
  PRIMARY KEY (name, key)
);
CREATE INDEX IF NOT EXISTS coord_counters_expiry ON coord_counters (expires_at_ms);
`;

/** Creates what is missing of the coordination's schema; safe when several nodes start at once. */
export async function ensureSchema(sql: Sql, schema: string): Promise<void> {
  try {
    await create(sql, schema);
  } catch (err) {
    // CREATE SCHEMA IF NOT EXISTS racing the store's migration (which holds another lock) may
    // fail with a unique violation on the schema's name; the schema exists then: once more.
    if (sqlState(err) !== '23505' && sqlState(err) !== '42P06') throw err;
    await create(sql, schema);
  }
}

async function create(sql: Sql, schema: string): Promise<void> {
  await sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(hashtext(${'postrider coordination ' + schema}))`;
    await tx.unsafe(`CREATE SCHEMA IF NOT EXISTS ${ident(schema)}`);
    await tx.unsafe(`SET LOCAL search_path TO ${ident(schema)}`);
    // Tables first: the functions' %ROWTYPE declarations name them.
    await tx.unsafe(TABLES);
    await tx.unsafe(HEARTBEATS_TABLE);
    await tx.unsafe(RATE_FUNCTIONS);
    await tx.unsafe(PACER_FUNCTION);
  });
}
