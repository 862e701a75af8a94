/** The LMDB engine's LmdbApiKeys: the port's verbs over the functions of store/lmdb/. */
import type { ApiKey } from '../../../domain/types.js';
import type { Store } from '../env.js';
import type { ApiKeysPort } from '../../port/index.js';
import type { NewApiKey, RevokeLiveOutcome } from '../../port/accounts.js';
import { ApiKeyLookups } from '../api-key-cache.js';
import { createApiKey, getApiKey, listApiKeys, liveKeysOf, revokeApiKey, revokeLiveApiKey } from '../api-keys.js';

export class LmdbApiKeys implements ApiKeysPort {
  /** findByToken's cache, with its invalidation (api-key-cache.ts). */
  private readonly lookups: ApiKeyLookups;

  constructor(private readonly store: Store) {
    this.lookups = new ApiKeyLookups(store);
  }

  /** The limit is counted inside the write that inserts (LMDB has one writer): never exceeded. */
  create(input: { accountId: string; channelId: string | null; name?: string; maxPerAccount?: number }): Promise<NewApiKey> {
    return createApiKey(this.store, input);
  }

  async findByToken(token: string): Promise<ApiKey | undefined> {
    return this.lookups.find(token);
  }

  async get(id: string): Promise<ApiKey | undefined> {
    return getApiKey(this.store, id);
  }

  async listLive(accountId: string): Promise<ApiKey[]> {
    return liveKeysOf(this.store, accountId);
  }

  async list(filter: { accountId?: string; channelId?: string } = {}): Promise<ApiKey[]> {
    return listApiKeys(this.store, filter);
  }

  async revoke(id: string): Promise<ApiKey | undefined> {
    const key = await revokeApiKey(this.store, id);
    if (key) this.lookups.forget(key.hash);
    return key;
  }

  async revokeLive(input: { id: string; accountId: string }): Promise<RevokeLiveOutcome> {
    const outcome = await revokeLiveApiKey(this.store, input.id, input.accountId);
    if (outcome.result === 'revoked') this.lookups.forget(outcome.key.hash);
    return outcome;
  }
}
