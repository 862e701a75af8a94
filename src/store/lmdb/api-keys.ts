/**
 * Store verbs for API keys. Only SHA-256 hashes of tokens are stored: a token is 192 random
 * bits, so a fast hash is enough (no password-style stretching needed), and looking a key up by
 * its hash means no secret is ever compared byte by byte in JavaScript.
 */
import { timingSafeEqual } from 'node:crypto';
import { hashToken, mayBeApiKeyToken, newApiKey } from '../../domain/secret-tokens.js';
import { AppError } from '../../domain/errors.js';
import type { ApiKey } from '../../domain/types.js';
import type { NewApiKey, RevokeLiveOutcome } from '../port/accounts.js';
import { dbsOf } from './databases.js';
import type { Store } from './env.js';

export type { NewApiKey } from '../port/accounts.js';

export { hashToken, mayBeApiKeyToken } from '../../domain/secret-tokens.js';

export async function createApiKey(
  store: Store,
  input: { accountId: string; channelId: string | null; name?: string; /** Refuse (resource_limit_exceeded) when the account has this many live keys. */ maxPerAccount?: number },
): Promise<NewApiKey> {
  const { key, token } = newApiKey(input, new Date());
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
  if (!mayBeApiKeyToken(token)) return undefined;
  const hash = hashToken(token);
  const id = dbsOf(store).apiKeyHashes.get(hash) as string | undefined;
  if (!id) return undefined;
  const key = dbsOf(store).apiKeys.get(id) as ApiKey | undefined;
  if (!key || key.revokedAt) return undefined;
  // Defence in depth: the index and the record must agree (constant-time compare).
  if (!timingSafeEqual(Buffer.from(key.hash, 'hex'), Buffer.from(hash, 'hex'))) return undefined;
  return key;
}

/**
 * The id of the live key with this token hash, or undefined: the hash index holds exactly the
 * live keys (revoking or removing a key removes its entry), whichever process wrote.
 */
export function liveKeyIdOfHash(store: Store, hash: string): string | undefined {
  return dbsOf(store).apiKeyHashes.get(hash) as string | undefined;
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
    return key.revokedAt ? key : markRevoked(store, key);
  });
}

/** Inside a write: the key revoked now, its hash out of the index (no token finds it any more). */
function markRevoked(store: Store, key: ApiKey): ApiKey {
  const revoked: ApiKey = { ...key, revokedAt: new Date().toISOString() };
  dbsOf(store).apiKeys.put(key.id, revoked);
  dbsOf(store).apiKeyHashes.remove(key.hash);
  return revoked;
}

/**
 * The API's revoke, decided inside the write: only a live key of `accountId` is revoked, so of
 * concurrent revokes of one key exactly one answers 'revoked'. A refusal seen before the write
 * is answered without one (no commit to wait for, as before the port); a key may only go from
 * live to revoked or gone, so a refusal read outside the write stays true.
 */
export async function revokeLiveApiKey(store: Store, id: string, accountId: string): Promise<RevokeLiveOutcome> {
  const refused = refusalOf(getApiKey(store, id), accountId);
  if (refused) return refused;
  return store.write((): RevokeLiveOutcome => {
    const key = getApiKey(store, id);
    return refusalOf(key, accountId) ?? { result: 'revoked', key: markRevoked(store, key as ApiKey) };
  });
}

function refusalOf(key: ApiKey | undefined, accountId: string): Exclude<RevokeLiveOutcome, { result: 'revoked' }> | undefined {
  if (!key || key.revokedAt) return { result: 'not_found' };
  return key.accountId !== accountId ? { result: 'forbidden' } : undefined;
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
