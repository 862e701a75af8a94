/**
 * The one place that decides which store engine a process runs on (issue 32): LMDB in the data
 * folder for one node (the default), PostgreSQL when store.postgresUrl is set (cluster mode:
 * every node keeps all its state there). The daemon and the CLI commands get their engine here
 * and otherwise see the store port; what only one engine has (LMDB's backup and check, the
 * outbox signal) is reached through `kind`.
 */
import type { Config } from '../config/schema.js';
import { LmdbStore } from '../store/lmdb/engine.js';
import { PostgresStore, type PostgresStoreOptions } from '../store/postgres/engine.js';

export type StoreEngine = { kind: 'lmdb'; store: LmdbStore } | { kind: 'postgres'; store: PostgresStore };

export interface EngineOptions {
  /** Refuse to create a store where there is none (CLI commands): no LMDB file, no PostgreSQL schema. */
  mustExist?: boolean;
  /** LMDB: read-only. */
  readOnly?: boolean;
  /** PostgreSQL: shown in pg_stat_activity (the node id, or the command's name). */
  applicationName?: string;
  /** PostgreSQL: called for each migration applied at start. */
  onMigration?: (version: number, name: string) => void;
  /** PostgreSQL: a partition maintenance run of the event log failed (retried a minute later). */
  onMaintenanceError?: (err: unknown) => void;
}

export function storeEngineFor(config: Pick<Config, 'dataDir' | 'store'>, o: EngineOptions = {}): StoreEngine {
  if (config.store.postgresUrl !== '') return { kind: 'postgres', store: new PostgresStore(postgresOptions(config, o)) };
  return { kind: 'lmdb', store: new LmdbStore({ dataDir: config.dataDir, mustExist: o.mustExist, readOnly: o.readOnly }) };
}

export function postgresOptions(config: Pick<Config, 'store'>, o: EngineOptions = {}): PostgresStoreOptions {
  return {
    url: config.store.postgresUrl,
    schema: config.store.postgresSchema,
    poolSize: config.store.poolSize,
    statementTimeoutMs: config.store.statementTimeoutMs,
    applicationName: o.applicationName ?? 'postrider',
    onMigration: o.onMigration,
    onMaintenanceError: o.onMaintenanceError,
    mustExist: o.mustExist,
  };
}

/**
 * How long a client waits for a store or coordination call (domain/request-deadline.ts): cluster
 * mode's store.requestTimeoutMs; 0 (none) on LMDB, whose calls do not wait on a network peer.
 */
export function requestDeadlineMs(config: Pick<Config, 'store'>): number {
  return config.store.postgresUrl !== '' ? config.store.requestTimeoutMs : 0;
}

/** The URL without its password, for logs and CLI output. */
export function redactedUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password !== '') u.password = '***';
    return u.toString();
  } catch {
    return '(unparsable URL)';
  }
}
