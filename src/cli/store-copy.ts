/**
 * postrider store copy-to-postgres: moves a single node's LMDB store into PostgreSQL, so that it
 * can grow into cluster mode (issue 32, Operations). The composition root of the copy: the LMDB
 * engine's export (store/lmdb/export/) streams plain transfer records (store/port/transfer.ts),
 * the PostgreSQL engine's import (store/postgres/import/) writes them, neither knowing the other.
 *
 * Safe by refusal rather than by merging: the daemon must be stopped (the data folder's lock is
 * held for the whole copy, so none can start meanwhile either), and the target schema must hold
 * nothing, so a copy that failed half way is simply run again after DROP SCHEMA. It ends with a
 * check: every kind counted in LMDB and, with COUNT(*), in PostgreSQL.
 */
import fs from 'node:fs';
import { loadConfig } from '../config/load.js';
import type { Config } from '../config/schema.js';
import { postgresOptions, redactedUrl } from '../compose/store-engine.js';
import { LmdbStore } from '../store/lmdb/engine.js';
import { lmdbExport } from '../store/lmdb/export/index.js';
import { FolderLock } from '../store/lmdb/folder-lock.js';
import { PostgresStore } from '../store/postgres/engine.js';
import { postgresImport } from '../store/postgres/import/index.js';
import { StoreProblem } from '../store/port/problems.js';
import type { TransferSource, TransferTarget } from '../store/port/transfer.js';
import { parse, UsageError, type CommandIo } from './args.js';
import { copyBatches, reportCounts } from './store-copy-report.js';
import { dataDirSource } from './with-store.js';

export const COPY_USAGE = `Usage:
  postrider store copy-to-postgres [--url URL] [--schema NAME]

Copies everything the LMDB store of dataDir holds into a PostgreSQL schema, for cluster mode:
accounts, keys, channels, domains and DKIM keys, messages and their bodies, the queue, broadcasts,
the event log with its seqs (API cursors stay valid), statistics, suppressions, webhooks and
their outbox, and the rest. The daemon must be stopped; the schema (default store.postgresSchema)
is created and must be empty. At the end every kind is counted in both stores: exit 0 when all
agree, 1 when one differs. A failed copy is run again after DROP SCHEMA <name> CASCADE.
Then set store.postgresUrl (and store.postgresSchema) and start the daemon: docs/operations.md.
Options: --url (default store.postgresUrl), --schema, --config PATH, --help`;

/** EX_CANTCREAT (sysexits.h): the target already holds data, nothing was written. */
const EXIT_TARGET_NOT_EMPTY = 73;

export async function storeCopyCommand(argv: string[], io: CommandIo): Promise<number> {
  const { values, help } = parse(argv, { config: { type: 'string' }, url: { type: 'string' }, schema: { type: 'string' } }, COPY_USAGE, 0);
  if (help) {
    io.out(COPY_USAGE);
    return 0;
  }
  const overrides = { ...(values.url !== undefined && { 'store.postgresUrl': values.url }), ...(values.schema !== undefined && { 'store.postgresSchema': values.schema }) };
  const config = loadConfig({ configPath: values.config, env: io.env, overrides });
  if (config.store.postgresUrl === '') throw new UsageError('no PostgreSQL to copy to: give --url or set store.postgresUrl', COPY_USAGE);
  if (!fs.existsSync(config.dataDir)) throw new StoreProblem('no_store', `there is no data folder ${config.dataDir}; ${dataDirSource(io, values.config)}`);
  const lock = await lockFolder(config.dataDir);
  try {
    return await withStores(config, (source, target) => copy(config, source, target, io));
  } finally {
    lock.release();
  }
}

/** The lock `serve` takes: held, no daemon runs on the folder, and none can start until the copy ends. */
async function lockFolder(dataDir: string): Promise<FolderLock> {
  try {
    return await FolderLock.acquire(dataDir);
  } catch (err) {
    if (err instanceof StoreProblem && err.code === 'data_folder_locked') {
      throw new StoreProblem('data_folder_locked', `store copy-to-postgres needs the daemon stopped (it copies a store nothing writes to): ${err.message}`);
    }
    throw err;
  }
}

/** LMDB read-only; PostgreSQL with its migrations applied (start()), without a statement timeout: COUNT(*) of a big table may take longer. */
async function withStores(config: Config, fn: (source: TransferSource, target: TransferTarget) => Promise<number>): Promise<number> {
  const lmdb = new LmdbStore({ dataDir: config.dataDir, readOnly: true, mustExist: true });
  await lmdb.start();
  try {
    const pg = new PostgresStore({ ...postgresOptions(config, { applicationName: 'postrider store copy-to-postgres' }), poolSize: 2, statementTimeoutMs: 0 });
    await pg.start();
    try {
      return await fn(lmdbExport(lmdb, { nowMs: Date.now() }), postgresImport(pg));
    } finally {
      await pg.stop();
    }
  } finally {
    await lmdb.stop();
  }
}

async function copy(config: Config, source: TransferSource, target: TransferTarget, io: CommandIo): Promise<number> {
  const to = { schema: config.store.postgresSchema, url: redactedUrl(config.store.postgresUrl) };
  const where = `schema ${to.schema} of ${to.url}`;
  const held = await target.holdsData();
  if (held.length > 0) {
    io.err(
      `postrider: ${where} is not empty (${held.join(', ')} hold data); the copy goes only into an empty schema. ` +
        `Give another --schema, or drop this one (DROP SCHEMA ${config.store.postgresSchema} CASCADE) if it holds nothing you need.`,
    );
    return EXIT_TARGET_NOT_EMPTY;
  }
  io.err(`copying the LMDB store of ${config.dataDir} into ${where}`);
  const started = Date.now();
  const copied = await copyBatches(source, target, io);
  const seconds = (Date.now() - started) / 1000;
  io.err(`copied ${copied.toLocaleString('en-US')} records in ${seconds.toFixed(1)} s (${Math.round(copied / Math.max(seconds, 0.001)).toLocaleString('en-US')} records/s)`);
  return reportCounts(source.counts(), await target.counts(), io, to);
}
