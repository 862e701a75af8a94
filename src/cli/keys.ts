/** postrider keys create|list|revoke */
import { createKey, listKeys, revoke } from '../api-keys/operator.js';
import { parse, table, UsageError, type CommandIo } from './args.js';
import { withStore } from './with-store.js';

const USAGE = `Usage:
  postrider keys create --account ACCOUNT_ID [--channel CHANNEL_ID] [--name NAME]
  postrider keys list [--account ACCOUNT_ID] [--channel CHANNEL_ID]
  postrider keys revoke KEY_ID

An account-level key (no --channel) acts on every channel of the account and must name the
channel in X-Service-Channel-Id when sending; a channel key acts on its channel only.
The secret is printed once at creation; only its SHA-256 hash is stored.
Options: --config PATH, --json, --help`;

export async function keysCommand(argv: string[], io: CommandIo): Promise<number> {
  const { values, positionals, help } = parse(
    argv,
    { account: { type: 'string' }, channel: { type: 'string' }, name: { type: 'string' }, config: { type: 'string' }, json: { type: 'boolean' } },
    USAGE,
    { create: 1, list: 1, revoke: 2 },
  );
  const [sub, ...rest] = positionals;
  if (help || !sub) {
    io.out(USAGE);
    return help ? 0 : 2;
  }
  return withStore(io, values.config, async (store) => {
    switch (sub) {
      case 'create': {
        if (!values.account) throw new UsageError('--account is required', USAGE);
        const created = await createKey(store, { accountId: values.account, channelId: values.channel ?? null, name: values.name });
        if (created.result === 'no_account') {
          io.err(`no account ${values.account}`);
          return 1;
        }
        if (created.result === 'no_channel') {
          io.err(`no channel ${values.channel} in account ${values.account}`);
          return 1;
        }
        const { key, token } = created;
        io.out(values.json ? JSON.stringify({ ...publicKey(key), token }) : `created key ${key.id}\n${token}\n(store it now: it is not shown again)`);
        return 0;
      }
      case 'list': {
        const keys = (await listKeys(store, { accountId: values.account, channelId: values.channel })).map(publicKey);
        io.out(values.json ? JSON.stringify(keys) : table(keys, ['id', 'prefix', 'accountId', 'channelId', 'name', 'createdAt', 'revokedAt']));
        return 0;
      }
      case 'revoke': {
        const [id] = rest;
        if (!id) throw new UsageError('KEY_ID is required', USAGE);
        const revoked = await revoke(store, id);
        if (!revoked) {
          io.err(`no key ${id}`);
          return 1;
        }
        io.out(values.json ? JSON.stringify(publicKey(revoked)) : `revoked key ${id}`);
        return 0;
      }
      default:
        throw new UsageError(`unknown subcommand "${sub}"`, USAGE);
    }
  });
}

/** A key as shown to operators: never the hash. */
function publicKey(k: { id: string; prefix: string; accountId: string; channelId: string | null; name: string; createdAt: string; revokedAt: string | null }) {
  return { id: k.id, prefix: k.prefix + '…', accountId: k.accountId, channelId: k.channelId ?? '', name: k.name, createdAt: k.createdAt, revokedAt: k.revokedAt ?? '' };
}
