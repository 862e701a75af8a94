/**
 * The operator's API key verbs (`postrider keys`): a key is made only for an existing account
 * and, for a channel key, a channel of that account. The outcome says which check failed, so
 * the CLI maps it to its message without reading the store itself.
 */
import type { ApiKey } from '../domain/types.js';
import type { StorePort } from '../store/port/index.js';

export type CreateKeyOutcome =
  | { result: 'ok'; key: ApiKey; /** The secret, returned exactly once. */ token: string }
  | { result: 'no_account' }
  | { result: 'no_channel' };

/** An account-level key (channelId null) or a key of one channel of the account. */
export async function createKey(store: StorePort, input: { accountId: string; channelId: string | null; name?: string }): Promise<CreateKeyOutcome> {
  if (!(await store.accounts.get(input.accountId))) return { result: 'no_account' };
  if (input.channelId) {
    const channel = await store.channels.get(input.channelId);
    if (!channel || channel.accountId !== input.accountId) return { result: 'no_channel' };
  }
  const { key, token } = await store.apiKeys.create(input);
  return { result: 'ok', key, token };
}

/** Every key (revoked ones too), optionally of one account and/or channel. */
export function listKeys(store: StorePort, filter: { accountId?: string; channelId?: string }): Promise<ApiKey[]> {
  return store.apiKeys.list(filter);
}

/** The revoked key (revoking twice keeps the first revocation); undefined for an unknown id. */
export function revoke(store: StorePort, id: string): Promise<ApiKey | undefined> {
  return store.apiKeys.revoke(id);
}
