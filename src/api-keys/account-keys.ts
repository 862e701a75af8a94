/**
 * API keys over the API (`/api-keys`): an account manages its own keys without shell access to
 * the host. Only an account-level key may list, create or revoke keys (a channel key could
 * otherwise mint itself an account key); a key of another account is 403, as every resource of
 * another account is (spec section 5). The secret is answered once, at creation: only its
 * SHA-256 is stored (store/api-keys.ts). Revoking is immediate: the next request with the key
 * is 401, and dashboard sessions opened with it end (sessions/service.ts checks the key).
 */
import { requireAccountKey } from '../domain/access.js';
import { AppError } from '../domain/errors.js';
import type { ApiKey, Principal } from '../domain/types.js';
import { isUuid } from '../domain/uuid.js';
import { createApiKey, getApiKey, liveKeysOf, revokeApiKey } from '../store/lmdb/api-keys.js';
import { getChannel } from '../store/lmdb/channels.js';
import type { LmdbStore } from '../store/lmdb/engine.js';

export interface ApiKeyServiceDeps {
  store: LmdbStore;
  /** limits.apiKeysPerAccount: live keys an account may hold. */
  maxPerAccount: number;
}

export class ApiKeyService {
  constructor(private readonly deps: ApiKeyServiceDeps) {}

  /** The account's live keys, oldest first, one page of them. */
  list(p: Principal, page: { limit: number; offset: number }): { results: ApiKey[]; totalCount: number } {
    requireAccountKey(p);
    const all = liveKeysOf(this.deps.store, p.accountId);
    return { results: all.slice(page.offset, page.offset + page.limit), totalCount: all.length };
  }

  /** A new key of the account, or of one of its channels; the secret is in the answer only. */
  async create(p: Principal, input: { name?: string; channelId?: string }): Promise<{ key: ApiKey; token: string }> {
    requireAccountKey(p);
    let channelId: string | null = null;
    if (input.channelId !== undefined) {
      const id = input.channelId.toLowerCase();
      const channel = isUuid(id) ? getChannel(this.deps.store, id) : undefined;
      if (!channel) throw new AppError('channel_not_found', `No channel ${input.channelId}`);
      if (channel.accountId !== p.accountId) throw new AppError('forbidden', 'The API key may not access this channel');
      channelId = channel.id;
    }
    return createApiKey(this.deps.store, { accountId: p.accountId, channelId, name: input.name, maxPerAccount: this.deps.maxPerAccount });
  }

  /** Revokes a live key of the account; unknown or already revoked is 404, another account's 403. */
  async revoke(p: Principal, id: string): Promise<void> {
    requireAccountKey(p);
    const key = getApiKey(this.deps.store, id.toLowerCase());
    if (!key || key.revokedAt) throw new AppError('not_found', `No API key ${id}`);
    if (key.accountId !== p.accountId) throw new AppError('forbidden', 'The API key may not access this key');
    await revokeApiKey(this.deps.store, key.id);
  }
}
