/**
 * Who a presented API key is. The key is looked up by its SHA-256 hash and the record compared
 * in constant time (the store's apiKeys.findByToken; LMDB: store/lmdb/api-keys.ts
 * findApiKeyByToken, behind its lookup cache); the HTTP adapter parses the header.
 */
import type { Principal } from '../domain/types.js';
import type { StorePort } from '../store/port/index.js';

/** The principal of a valid key; undefined for an unknown or revoked one. */
export async function principalOfToken(store: StorePort, token: string): Promise<Principal | undefined> {
  const key = await store.apiKeys.findByToken(token);
  return key ? { keyId: key.id, accountId: key.accountId, channelId: key.channelId } : undefined;
}
