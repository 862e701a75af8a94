/**
 * Store verbs for API keys. Only SHA-256 hashes of tokens are stored: a token is 192 random
 * bits, so a fast hash is enough (no password-style stretching needed), and looking a key up by
 * its hash means no secret is ever compared byte by byte in JavaScript.
 */
import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { AppError } from '../../domain/errors.js';
import type { ApiKey } from '../../domain/types.js';
import { dbsOf } from './databases.js';
import type { Store } from './env.js';

const TOKEN_PREFIX = 'pr_';

export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

export interface NewApiKey {
  key: ApiKey;
  /** The secret, returned exactly once. */
  token: string;
}

export async function createApiKey(
  store: Store,
  input: { accountId: string; channelId: string | null; name?: string; /** Refuse (resource_limit_exceeded) when the account has this many live keys. */ maxPerAccount?: number },
): Promise<NewApiKey> {
  const token = TOKEN_PREFIX + randomBytes(24).toString('base64url');
  const key: ApiKey = {
    id: randomUUID(),
    accountId: input.accountId,
    channelId: input.channelId,
    name: input.name ?? '',
    prefix: token.slice(0, 10),
    hash: hashToken(token),
    createdAt: new Date().toISOString(),
    revokedAt: null,
  };
  await store.write(() => {
    // Counted inside the write: two concurrent creations cannot both pass the check (one writer).
    if (input.maxPerAccount !== undefined && liveKeysOf(store, input.accountId).length >= input.maxPerAccount) {
      throw new AppError('resource_limit_exceeded', `An account may have at most ${input.maxPerAccount} API keys; revoke one first`);
    }
    dbsOf(store).apiKeys.put(key.id, key);
    dbsOf(store).apiKeyHashes.put(key.hash, key.id);
  });
  return { key, token };
}

/** The live (not revoked) key for a presented token, or undefined. */
export function findApiKeyByToken(store: Store, token: string): ApiKey | undefined {
  if (!token.startsWith(TOKEN_PREFIX) || token.length > 200) return undefined;
  const hash = hashToken(token);
  const id = dbsOf(store).apiKeyHashes.get(hash) as string | undefined;
  if (!id) return undefined;
  const key = dbsOf(store).apiKeys.get(id) as ApiKey | undefined;
  if (!key || key.revokedAt) return undefined;
  // Defence in depth: the index and the record must agree (constant-time compare).
  if (!timingSafeEqual(Buffer.from(key.hash, 'hex'), Buffer.from(hash, 'hex'))) return undefined;
  return key;
}

/** The account's keys that are not revoked, oldest first. */
export function liveKeysOf(store: Store, accountId: string): ApiKey[] {
  return listApiKeys(store, { accountId })
    .filter((k) => !k.revokedAt)
    .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
}

/** The key with this id, revoked or not (the API tells another account's key from none). */
export function getApiKey(store: Store, id: string): ApiKey | undefined {
  return dbsOf(store).apiKeys.get(id) as ApiKey | undefined;
}

export function listApiKeys(store: Store, filter: { accountId?: string; channelId?: string } = {}): ApiKey[] {
  return [...dbsOf(store).apiKeys.getRange({})]
    .map((e) => e.value as ApiKey)
    .filter((k) => (!filter.accountId || k.accountId === filter.accountId) && (!filter.channelId || k.channelId === filter.channelId));
}

export async function revokeApiKey(store: Store, id: string): Promise<ApiKey | undefined> {
  return store.write(() => {
    const key = dbsOf(store).apiKeys.get(id) as ApiKey | undefined;
    if (!key) return undefined;
    if (key.revokedAt) return key;
    const revoked: ApiKey = { ...key, revokedAt: new Date().toISOString() };
    dbsOf(store).apiKeys.put(id, revoked);
    dbsOf(store).apiKeyHashes.remove(key.hash);
    return revoked;
  });
}

/** Inside a write: removes every key bound to a deleted channel. */
export function removeChannelKeysInTxn(store: Store, channelId: string): void {
  for (const { key, value } of dbsOf(store).apiKeys.getRange({})) {
    const k = value as ApiKey;
    if (k.channelId !== channelId) continue;
    dbsOf(store).apiKeyHashes.remove(k.hash);
    dbsOf(store).apiKeys.remove(key);
  }
}

/** The live (not revoked) key with this id, or undefined (a dashboard session checks its key on every use). */
export function findLiveApiKey(store: Store, id: string): ApiKey | undefined {
  const key = dbsOf(store).apiKeys.get(id) as ApiKey | undefined;
  return key && !key.revokedAt ? key : undefined;
}
