/**
 * Accounts, their API keys (stored hashed) and the web dashboard's sessions.
 *
 * Part of the store port (store/port/index.ts): asynchronous verbs that take and return plain
 * data; what must commit together is one verb. Implemented by the LMDB engine in
 * store/lmdb/repos/ and checked by the contract suite in test/store-contract/.
 */
import type { Account, AccountState, ApiKey } from '../../domain/types.js';

export interface AccountsPort {
  /** A new account (a fresh id, createdAt = updatedAt = now). */
  create(input: { name: string; state: AccountState }): Promise<Account>;
  /** The account with this id, or undefined. */
  get(id: string): Promise<Account | undefined>;
  /** Every account, in id order (the operator's list; the first-start check). */
  list(): Promise<Account[]>;
  /**
   * The account with its new state (updatedAt now), or undefined for an unknown id. One
   * conditional update (SQL: UPDATE ... WHERE id RETURNING): an account is never created by it.
   */
  setState(id: string, state: AccountState): Promise<Account | undefined>;
}

/** A key just made, with its secret: the only time the token exists outside the client. */
export interface NewApiKey {
  key: ApiKey;
  /** The secret, returned exactly once. */
  token: string;
}

/** What revokeLive did: the key revoked now, or why not (the API's 404 and 403). */
export type RevokeLiveOutcome =
  | { result: 'revoked'; key: ApiKey }
  /** Unknown, or revoked already: the API answers 404 either way. */
  | { result: 'not_found' }
  /** A live key of another account (403). */
  | { result: 'forbidden' };

export interface ApiKeysPort {
  /**
   * A new key of the account (channelId null) or of one of its channels; the secret is in the
   * answer only, the store keeps its SHA-256. With `maxPerAccount`, refuses with AppError
   * resource_limit_exceeded when the account already has that many live keys: counted and
   * inserted atomically, so concurrent creations never exceed the limit (LMDB: inside the one
   * write; SQL: the account's row locked, or a conditional counter update, in the insert's
   * transaction).
   */
  create(input: { accountId: string; channelId: string | null; name?: string; maxPerAccount?: number }): Promise<NewApiKey>;
  /**
   * The live key a presented token stands for, or undefined (unknown, malformed or revoked):
   * looked up by the token's SHA-256 and compared in constant time. Called on every request and
   * SMTP AUTH, so an engine may cache it; a revoke or a key's removal must be seen by the next
   * lookup on every node (each engine documents its invalidation).
   */
  findByToken(token: string): Promise<ApiKey | undefined>;
  /** The key with this id, revoked or not (the API tells another account's key from none). */
  get(id: string): Promise<ApiKey | undefined>;
  /** The account's live (not revoked) keys, oldest first (createdAt, then id). */
  listLive(accountId: string): Promise<ApiKey[]>;
  /** Every key, revoked ones too, optionally of one account and/or channel (the operator's list). */
  list(filter?: { accountId?: string; channelId?: string }): Promise<ApiKey[]>;
  /**
   * The operator's revoke: idempotent, the key as revoked (a second revoke keeps the first
   * revocation's time), undefined for an unknown id. One conditional update.
   */
  revoke(id: string): Promise<ApiKey | undefined>;
  /**
   * The API's revoke: revokes the key only when it is live and the account's, deciding inside one
   * atomic step (SQL: UPDATE ... WHERE id AND revoked_at IS NULL RETURNING, then the reason):
   * of concurrent revokes of one key exactly one gets 'revoked', the others 'not_found'.
   */
  revokeLive(input: { id: string; accountId: string }): Promise<RevokeLiveOutcome>;
}

/** A dashboard session as stored (under the SHA-256 of its token; the token is never stored). */
export interface DashboardSession {
  keyId: string;
  accountId: string;
  createdAtMs: number;
  /** Last use, moved forward at most once a minute (the idle expiry counts from here). */
  lastSeenAtMs: number;
  /** Absolute end, whatever the use. */
  expiresAtMs: number;
}

export interface DashboardSessionsPort {
  /**
   * A new session for the key, lasting at most `lifetimeMs` from `nowMs`; returns the token
   * (given to the browser as the cookie, never stored) and the session.
   */
  create(input: { keyId: string; accountId: string; nowMs: number; lifetimeMs: number }): Promise<{ token: string; session: DashboardSession }>;
  /** The session of a presented token (expired or not: the caller judges) and its id, or undefined. */
  findByToken(token: string): Promise<{ id: string; session: DashboardSession } | undefined>;
  /** Moves the last use forward to `nowMs` (never back); nothing for a session gone meanwhile. */
  touch(id: string, nowMs: number): Promise<void>;
  /** Removes the session (nothing for an unknown id). */
  remove(id: string): Promise<void>;
  /**
   * Removes every session that is over at `nowMs`: past expiresAtMs, idle for `idleMs` since
   * lastSeenAtMs, or whose key is revoked or gone (checked in the store: SQL, one DELETE with a
   * NOT EXISTS on the live key). Returns how many were removed.
   */
  sweep(input: { nowMs: number; idleMs: number }): Promise<number>;
}
