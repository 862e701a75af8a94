/** postrider migrate [--status] */
import { loadConfig } from '../config/load.js';
import { postgresOptions, redactedUrl } from '../compose/store-engine.js';
import { PostgresStore, postgresSchemaStatus } from '../store/postgres/engine.js';
import { parse, type CommandIo } from './args.js';

const USAGE = `Usage:
  postrider migrate [--status]

Cluster mode (store.postgresUrl set): brings the PostgreSQL schema to the version this postrider
needs, and prints each migration it applied. Safe while other nodes run or start: migrations
run one at a time under a lock in the database, each in one transaction. \`serve\` does the same
at start, so running it first is only needed to migrate before a rolling upgrade.
--status prints the database's version and the newest one known, changing nothing (exit 3
when the database is behind).
Without store.postgresUrl there is nothing to migrate: the LMDB store upgrades itself at serve.
Options: --config PATH, --help`;

export async function migrateCommand(argv: string[], io: CommandIo): Promise<number> {
  const { values, help } = parse(argv, { config: { type: 'string' }, status: { type: 'boolean' } }, USAGE, 0);
  if (help) {
    io.out(USAGE);
    return 0;
  }
  const config = loadConfig({ configPath: values.config, env: io.env });
  if (config.store.postgresUrl === '') {
    io.out('store.postgresUrl is not set: this node keeps its state in LMDB, which upgrades itself at serve; nothing to migrate');
    return 0;
  }
  const opts = postgresOptions(config, { applicationName: 'postrider migrate' });
  const where = `schema ${config.store.postgresSchema} of ${redactedUrl(config.store.postgresUrl)}`;
  if (values.status) {
    const { current, latest } = await postgresSchemaStatus(opts);
    io.out(`${where}: version ${current}, newest known ${latest}${current < latest ? ' (behind: run postrider migrate)' : ''}`);
    return current < latest ? 3 : 0;
  }
  const store = new PostgresStore({ ...opts, onMigration: (v, name) => io.out(`applied migration ${v}: ${name}`) });
  await store.start();
  try {
    const report = store.migrations();
    io.out(report && report.applied.length > 0 ? `${where}: now at version ${report.to} (was ${report.from})` : `${where}: up to date at version ${report?.to ?? '?'}`);
  } finally {
    await store.stop();
  }
  return 0;
}
