/**
 * Entry point of the `postrider` command (bin/postrider.js calls main()).
 * Dispatches to one command module; turns usage and configuration errors into a clear message
 * and a non-zero exit code instead of a stack trace.
 */
import { ConfigError } from './config/load.js';
import { accountsCommand } from './cli/accounts.js';
import { UsageError, type CommandIo } from './cli/args.js';
import { configCommand } from './cli/config.js';
import { keysCommand } from './cli/keys.js';
import { queueCommand } from './cli/queue.js';
import { serveCommand } from './cli/serve.js';

const COMMANDS: Record<string, (argv: string[], io: CommandIo) => Promise<number>> = {
  serve: serveCommand,
  keys: keysCommand,
  accounts: accountsCommand,
  config: configCommand,
  queue: queueCommand,
};

export const USAGE = `postrider: self-hosted mail transfer agent with an HTTP API and SMTP submission

Usage: postrider <command> [options]

Commands:
  serve                         run the daemon
  keys create|list|revoke       manage API keys
  accounts create|list|set-state  manage accounts
  config print|example          show the effective configuration, or an example file
  queue list|retry|drop         inspect and manage the delivery queue

Every command takes --help and --config PATH.`;

export async function main(argv: string[], io: CommandIo): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    io.out(USAGE);
    return name ? 0 : 2;
  }
  const command = COMMANDS[name];
  if (!command) {
    io.err(`unknown command "${name}"\n\n${USAGE}`);
    return 2;
  }
  try {
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
    throw err;
  }
}
