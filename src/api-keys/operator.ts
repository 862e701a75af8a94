/**
 * The operator's API key verbs (`postrider keys`): a key is made only for an existing account
 * and, for a channel key, a channel of that account. The outcome says which check failed, so
 * the CLI maps it to its message without reading the store itself.
 */
import type { ApiKey } from '../domain/types.js';
import { getAccount } from '../store/lmdb/accounts.js';
import { createApiKey, listApiKeys, revokeApiKey } from '../store/lmdb/api-keys.js';
import { getChannel } from '../store/lmdb/channels.js';
import type { LmdbStore } from '../store/lmdb/engine.js';

export type CreateKeyOutcome =
  | { result: 'ok'; key: ApiKey; /** The secret, returned exactly once. */ token: string }
  | { result: 'no_account' }
  | { result: 'no_channel' };

/** An account-level key (channelId null) or a key of one channel of the account. */
export async function createKey(store: LmdbStore, input: { accountId: string; channelId: string | null; name?: string }): Promise<CreateKeyOutcome> {
  if (!getAccount(store, input.accountId)) return { result: 'no_account' };
  if (input.channelId) {
    const channel = getChannel(store, input.channelId);
    if (!channel || channel.accountId !== input.accountId) return { result: 'no_channel' };
  }
  const { key, token } = await createApiKey(store, input);
  return { result: 'ok', key, token };
}

/** Every key (revoked ones too), optionally of one account and/or channel. */
export function listKeys(store: LmdbStore, filter: { accountId?: string; channelId?: string }): ApiKey[] {
  return listApiKeys(store, filter);
}

/** The revoked key (revoking twice keeps the first revocation); undefined for an unknown id. */
export function revoke(store: LmdbStore, id: string): Promise<ApiKey | undefined> {
  return revokeApiKey(store, id);
}
