/**
 * Who a presented API key is. The key is looked up by its SHA-256 hash and the record compared
 * in constant time (store/api-keys.ts findApiKeyByToken); the HTTP adapter parses the header.
 */
import type { Principal } from '../domain/types.js';
import { findApiKeyByToken } from '../store/lmdb/api-keys.js';
import type { LmdbStore } from '../store/lmdb/engine.js';

/** The principal of a valid key; undefined for an unknown or revoked one. */
export function principalOfToken(store: LmdbStore, token: string): Principal | undefined {
  const key = findApiKeyByToken(store, token);
  return key ? { keyId: key.id, accountId: key.accountId, channelId: key.channelId } : undefined;
}
