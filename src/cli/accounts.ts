/** postrider accounts create|list|set-state */
import { ACCOUNT_STATES, type AccountState } from '../domain/types.js';
import * as accounts from '../accounts/service.js';
import { parse, table, UsageError, type CommandIo } from './args.js';
import { withStore } from './with-store.js';

const USAGE = `Usage:
  postrider accounts create --name NAME [--state pending|active|suspended]
  postrider accounts list
  postrider accounts set-state ACCOUNT_ID pending|active|suspended

States: pending accounts may send limits.pendingSendLimit (default 1,000) emails in total; suspended
accounts cannot send (403 account_forbidden); active accounts are unrestricted.
Options: --config PATH, --json, --help`;

export async function accountsCommand(argv: string[], io: CommandIo): Promise<number> {
  const { values, positionals, help } = parse(
    argv,
    { name: { type: 'string' }, state: { type: 'string' }, config: { type: 'string' }, json: { type: 'boolean' } },
    USAGE,
    { create: 1, list: 1, 'set-state': 3 },
  );
  const [sub, ...rest] = positionals;
  if (help || !sub) {
    io.out(USAGE);
    return help ? 0 : 2;
  }
  const state = (s: string | undefined, fallback?: AccountState): AccountState => {
    const v = s ?? fallback;
    if (!v || !ACCOUNT_STATES.includes(v as AccountState)) throw new UsageError(`state must be one of ${ACCOUNT_STATES.join(', ')}`, USAGE);
    return v as AccountState;
  };
  return withStore(io, values.config, async (store) => {
    switch (sub) {
      case 'create': {
        if (!values.name) throw new UsageError('--name is required', USAGE);
        const account = await accounts.create(store, { name: values.name, state: state(values.state, 'active') });
        io.out(values.json ? JSON.stringify(account) : `created account ${account.id} (${account.state})`);
        return 0;
      }
      case 'list': {
        const all = await accounts.list(store);
        io.out(values.json ? JSON.stringify(all) : table(all as unknown as Record<string, unknown>[], ['id', 'name', 'state', 'createdAt']));
        return 0;
      }
      case 'set-state': {
        const [id, s] = rest;
        if (!id) throw new UsageError('ACCOUNT_ID is required', USAGE);
        const updated = await accounts.setState(store, id, state(s));
        if (!updated) {
          io.err(`no account ${id}`);
          return 1;
        }
        io.out(values.json ? JSON.stringify(updated) : `account ${id} is now ${updated.state}`);
        return 0;
      }
      default:
        throw new UsageError(`unknown subcommand "${sub}"`, USAGE);
    }
  });
}
