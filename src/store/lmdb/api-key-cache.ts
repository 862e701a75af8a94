/**
 * The LMDB engine's cache of API-key lookups by token (ApiKeysPort.findByToken), asked on every
 * HTTP request and SMTP AUTH. Before the port this lookup had no cache of its own: it was two
 * synchronous reads of the memory map (hash index, then the key record, decoded) on each call.
 * The cache keeps the decoded live key by the token's SHA-256, so a hit costs the hash and one
 * read of the hash index instead of reading and decoding the record.
 *
 * Invalidation:
 * - a revoke through this store drops the entry at once (forget);
 * - every hit is checked against the hash index, which holds exactly the live keys: a revoke or a
 *   channel's key removal written by anything else (the CLI's `postrider keys revoke`, another
 *   process sharing the data folder, channel deletion) is seen by the next lookup, as before;
 * - a reopened store starts empty (the databases object changes with each start).
 * An engine shared by nodes (PostgreSQL) cannot read a local index on each hit; it would send a
 * notification in the revoking transaction (NOTIFY api_key_revoked, the hash) that every node's
 * LISTEN turns into forget(), clear the whole cache when its listening connection was lost (a
 * notification may have been missed), and bound each entry's age as a last resort.
 * Unknown tokens are never cached: a client trying tokens cannot fill the cache.
 */
import { LRUCache } from 'lru-cache';
import type { ApiKey } from '../../domain/types.js';
import { findApiKeyByToken, hashToken, liveKeyIdOfHash, mayBeApiKeyToken } from './api-keys.js';
import { dbsOf } from './databases.js';
import type { Dbs, Store } from './env.js';

/** The keys a busy instance sees, not every key stored. */
const KEYS_MAX = 1000;

export class ApiKeyLookups {
  private readonly byHash = new LRUCache<string, ApiKey>({ max: KEYS_MAX });
  /** The databases the entries were read from: another open of the store starts afresh. */
  private readFrom: Dbs | null = null;

  constructor(private readonly store: Store) {}

  /** The live key of a presented token, or undefined. */
  find(token: string): ApiKey | undefined {
    if (!mayBeApiKeyToken(token)) return undefined;
    this.followReopen();
    const hash = hashToken(token);
    const cached = this.byHash.get(hash);
    if (cached) {
      const liveId = liveKeyIdOfHash(this.store, hash);
      if (liveId === cached.id) return cached;
      this.byHash.delete(hash);
    }
    const key = findApiKeyByToken(this.store, token);
    if (key) this.byHash.set(hash, key);
    return key;
  }

  /** A key revoked or removed through this store: its entry goes now. */
  forget(hash: string): void {
    this.byHash.delete(hash);
  }

  private followReopen(): void {
    const dbs = dbsOf(this.store);
    if (dbs === this.readFrom) return;
    this.byHash.clear();
    this.readFrom = dbs;
  }
}
