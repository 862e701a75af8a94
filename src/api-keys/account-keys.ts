/**
 * API keys over the API (`/api-keys`): an account manages its own keys without shell access to
 * the host. Only an account-level key may list, create or revoke keys (a channel key could
 * otherwise mint itself an account key); a key of another account is 403, as every resource of
 * another account is (spec section 5). The secret is answered once, at creation: only its
 * SHA-256 is stored (store/lmdb/api-keys.ts). Revoking is immediate: the next request with the key
 * is 401, and dashboard sessions opened with it end (sessions/service.ts checks the key).
 */
import { requireAccountKey } from '../domain/access.js';
import { AppError } from '../domain/errors.js';
import type { ApiKey, Principal } from '../domain/types.js';
import { isUuid } from '../domain/uuid.js';
import type { StorePort } from '../store/port/index.js';

export interface ApiKeyServiceDeps {
  store: StorePort;
  /** limits.apiKeysPerAccount: live keys an account may hold. */
  maxPerAccount: number;
}

export class ApiKeyService {
  constructor(private readonly deps: ApiKeyServiceDeps) {}

  /** The account's live keys, oldest first, one page of them. */
  async list(p: Principal, page: { limit: number; offset: number }): Promise<{ results: ApiKey[]; totalCount: number }> {
    requireAccountKey(p);
    const all = await this.deps.store.apiKeys.listLive(p.accountId);
    return { results: all.slice(page.offset, page.offset + page.limit), totalCount: all.length };
  }

  /** A new key of the account, or of one of its channels; the secret is in the answer only. */
  async create(p: Principal, input: { name?: string; channelId?: string }): Promise<{ key: ApiKey; token: string }> {
    requireAccountKey(p);
    let channelId: string | null = null;
    if (input.channelId !== undefined) {
      const id = input.channelId.toLowerCase();
      const channel = isUuid(id) ? await this.deps.store.channels.get(id) : undefined;
      if (!channel) throw new AppError('channel_not_found', `No channel ${input.channelId}`);
      if (channel.accountId !== p.accountId) throw new AppError('forbidden', 'The API key may not access this channel');
      channelId = channel.id;
    }
    // The limit is counted and the key inserted in one atomic verb: concurrent creations never exceed it.
    return this.deps.store.apiKeys.create({ accountId: p.accountId, channelId, name: input.name, maxPerAccount: this.deps.maxPerAccount });
  }

  /**
   * Revokes a live key of the account; unknown or already revoked is 404, another account's 403.
   * Decided by one atomic verb: of concurrent revokes of one key one succeeds, the others are 404.
   */
  async revoke(p: Principal, id: string): Promise<void> {
    requireAccountKey(p);
    const outcome = await this.deps.store.apiKeys.revokeLive({ id: id.toLowerCase(), accountId: p.accountId });
    if (outcome.result === 'not_found') throw new AppError('not_found', `No API key ${id}`);
    if (outcome.result === 'forbidden') throw new AppError('forbidden', 'The API key may not access this key');
  }
}
