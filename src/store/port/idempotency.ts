/**
 * Idempotency keys of the send API (DESIGN.md: 1 hour window, scoped to the credential's
 * account): per account and key, the request's fingerprint and its first response.
 *
 * A key is taken in two steps, each atomic in any engine: claim() inserts a claim if the key holds
 * neither a claim nor a live record (insert-if-absent: a unique key, or a row lock), so of
 * concurrent requests with one key exactly one does the work; the send's commit verb
 * (MessagesPort.commit, BroadcastsPort.accept) then stores the record in the same write as the
 * effect it remembers, and release() ends the claim. The others see the claim (busy), wait for it
 * with settled(), and claim again: they then find the record (a replay) or, when the first
 * request failed and wrote nothing, the key free.
 *
 * Part of the store port (store/port/index.ts): asynchronous verbs that take and return plain
 * data; what must commit together is one verb. Implemented by the LMDB engine in
 * store/lmdb/repos/ and checked by the contract suite in test/store-contract/.
 */

/** What a key remembers: the request's fingerprint and the response it got. */
export interface IdempotencyRecord {
  fingerprint: string;
  status: number;
  body: unknown;
  createdAt: string;
  expiresAtMs: number;
}

/** The key of an idempotency record: one account's key. */
export interface IdempotencyKey {
  accountId: string;
  key: string;
}

/** What a commit verb stores with its effect: the record of the claimed key. */
export interface IdempotencyWrite extends IdempotencyKey {
  record: IdempotencyRecord;
}

/** A request's claim on a key, held until release(). */
export interface IdempotencyClaim extends IdempotencyKey {
  /** Names this claim: release() ends it and no other. */
  claimNo: string;
}

export type ClaimResult =
  /** The caller does the work, commits the record with its effect, then releases the claim. */
  | { status: 'claimed'; claim: IdempotencyClaim }
  /** The key's live record (its fingerprint says whether it is the same request). */
  | { status: 'recorded'; record: IdempotencyRecord }
  /** Another request holds the key now: wait for settled(), then claim again. */
  | { status: 'busy' };

export interface IdempotencyPort {
  /**
   * Claims the key for one request, atomically (insert-if-absent): exactly one of concurrent
   * callers gets `claimed`; a key with a live record (expiresAtMs > nowMs) answers `recorded`,
   * one claimed by another request `busy`. A claim lasts until released; an engine shared by
   * several processes also ends it after `leaseMs`, so that a process that died does not hold
   * the key for ever.
   */
  claim(q: IdempotencyKey & { nowMs: number; leaseMs: number }): Promise<ClaimResult>;

  /**
   * Ends a claim (once its work committed the record, or failed having written nothing): the
   * record, if the work stored one, stays. A claim that ended already is ignored.
   */
  release(claim: IdempotencyClaim): Promise<void>;

  /** Resolves once no request holds a claim on the key (released or expired): a busy caller then claims again. */
  settled(key: IdempotencyKey): Promise<void>;

  /** The key's live record (expired ones are ignored until the sweep removes them). */
  get(q: IdempotencyKey & { nowMs: number }): Promise<IdempotencyRecord | undefined>;

  /** Removes up to `max` records expired at nowMs; returns how many. */
  sweep(nowMs: number, max?: number): Promise<number>;
}
