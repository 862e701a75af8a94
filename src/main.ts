/**
 * Entry point of the `postrider` command (bin/postrider.js calls main()).
 * Dispatches to one command module; turns usage and configuration errors into a clear message
 * and a non-zero exit code instead of a stack trace.
 */
import { ConfigError } from './config/load.js';
import { UsageError, type CommandIo } from './cli/args.js';
import { ListenProblem } from './domain/listen-problem.js';
import { StoreProblem } from './store/port/problems.js';

type Command = (argv: string[], io: CommandIo) => Promise<number>;

/** The version of package.json, read when asked (no work at import time). */
async function packageVersion(): Promise<string> {
  const { readFile } = await import('node:fs/promises');
  const pkg = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

// Loaded on demand: `serve` pulls in fastify, smtp-server, the worker pool and prom-client,
// which a quick `postrider keys list` or `--help` should not pay for.
const COMMANDS: Record<string, () => Promise<Command>> = {
  serve: async () => (await import('./cli/serve.js')).serveCommand,
  keys: async () => (await import('./cli/keys.js')).keysCommand,
  accounts: async () => (await import('./cli/accounts.js')).accountsCommand,
  config: async () => (await import('./cli/config.js')).configCommand,
  queue: async () => (await import('./cli/queue.js')).queueCommand,
  store: async () => (await import('./cli/store.js')).storeCommand,
  migrate: async () => (await import('./cli/migrate.js')).migrateCommand,
  init: async () => (await import('./cli/init.js')).initCommand,
};

export const USAGE = `postrider: self-hosted mail transfer agent with an HTTP API and SMTP submission

Usage: postrider <command> [options]

Commands:
  init --hostname NAME          write the configuration file of a production install
  serve                         run the daemon
  keys create|list|revoke       manage API keys
  accounts create|list|set-state  manage accounts
  config print|example          show the effective configuration, or an example file
  queue list|retry|drop         inspect and manage the delivery queue
  store check|backup|copy-to-postgres
                                check the store, copy it while the daemon runs, or move it
                                into PostgreSQL (cluster mode)
  migrate [--status]            bring the PostgreSQL schema up to date (cluster mode)

Every command takes --help and --config PATH; postrider --version prints the version.`;

export async function main(argv: string[], io: CommandIo): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    io.out(USAGE);
    return name ? 0 : 2;
  }
  if (name === '--version' || name === '-V' || name === 'version') {
    io.out(`postrider ${await packageVersion()}`);
    return 0;
  }
  const load = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!load) {
    io.err(`unknown command "${name}"\n\n${USAGE}`);
    return 2;
  }
  try {
    const command = await load();
    return await command(rest, io);
  } catch (err) {
    if (err instanceof UsageError) {
      io.err(`${err.message}\n\n${err.usage}`);
      return 2;
    }
    if (err instanceof ConfigError) {
      io.err(err.message);
      return 78; // EX_CONFIG (sysexits.h): systemd shows it as a configuration error.
    }
    if (err instanceof StoreProblem || err instanceof ListenProblem) {
      // One line the operator can act on (what, where, what to do), no stack trace.
      io.err(`postrider: ${err.message}`);
      return err.exitCode;
    }
    throw err;
  }
}
