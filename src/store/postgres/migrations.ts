/**
 * Applies the schema's migrations (schema/index.ts) at start and for `postrider migrate`.
 *
 * Safe when several nodes start at once: the whole run holds a transaction-scoped advisory lock
 * keyed by the schema's name, so one node applies and the others wait, then find nothing left
 * to do. Each migration and its row in schema_migrations commit together (PostgreSQL's DDL is
 * transactional), so a crash leaves the database at the last whole migration.
 */
import { ident, type Sql } from './client.js';
import { MIGRATIONS, type Migration } from './schema/index.js';

export interface MigrationReport {
  /** The version the database was at before. */
  from: number;
  /** The version it is at now. */
  to: number;
  applied: Migration[];
}

export class SchemaTooNew extends Error {
  constructor(readonly found: number, readonly known: number) {
    super(`the database's schema is at version ${found}, newer than this postrider knows (${known}): upgrade postrider on this node`);
  }
}

export function latestVersion(): number {
  return MIGRATIONS[MIGRATIONS.length - 1]?.version ?? 0;
}

export async function migrate(sql: Sql, schema: string, onApplied?: (m: Migration) => void): Promise<MigrationReport> {
  const report = await sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(hashtext(${'postrider migrate ' + schema}))`;
    await tx.unsafe(`CREATE SCHEMA IF NOT EXISTS ${ident(schema)}`);
    await tx.unsafe(`CREATE TABLE IF NOT EXISTS ${ident(schema)}.schema_migrations (
      version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
    const [row] = await tx.unsafe<{ v: number | null }[]>(`SELECT max(version) AS v FROM ${ident(schema)}.schema_migrations`);
    const from = row?.v ?? 0;
    if (from > latestVersion()) throw new SchemaTooNew(from, latestVersion());
    const applied: Migration[] = [];
    for (const m of MIGRATIONS) {
      if (m.version <= from) continue;
      await tx.unsafe(`SET LOCAL search_path TO ${ident(schema)}`);
      await tx.unsafe(m.sql);
      await tx.unsafe(`INSERT INTO ${ident(schema)}.schema_migrations (version, name) VALUES ($1, $2)`, [m.version, m.name]);
      applied.push(m);
    }
    return { from, to: applied.length ? applied[applied.length - 1]!.version : from, applied };
  });
  for (const m of report.applied) onApplied?.(m);
  return report;
}

/** The version the database is at (0: never migrated), without changing anything. */
export async function schemaVersion(sql: Sql, schema: string): Promise<number> {
  const [t] = await sql<{ ok: boolean }[]>`SELECT to_regclass(${schema + '.schema_migrations'}) IS NOT NULL AS ok`;
  if (!t?.ok) return 0;
  const [row] = await sql.unsafe<{ v: number | null }[]>(`SELECT max(version) AS v FROM ${ident(schema)}.schema_migrations`);
  return row?.v ?? 0;
}
