/**
 * What the store holds about itself: the first-start state (bootstrap, initial key), the tracking secret, the node identity.
 *
 * Part of the store port (store/port/index.ts): asynchronous verbs that take and return plain
 * data; what must commit together is one verb. Implemented by the LMDB engine in
 * store/lmdb/repos/ and checked by the contract suite in test/store-contract/.
 */

export interface MetaPort {
  /** True once markBootstrapped ran on this store (bootstrap.ts: the first start's account and key). */
  isBootstrapped(): Promise<boolean>;
  /**
   * Records the first start as done at `at` and the initial key as pending (not yet printed),
   * both in one commit.
   */
  markBootstrapped(at: Date): Promise<void>;
  /** True while the initial key of the first start waits to be printed. */
  isInitialKeyPending(): Promise<boolean>;
  /** The initial key was printed: never again (nothing when it was not pending). */
  clearInitialKeyPending(): Promise<void>;
  /**
   * The HMAC key of the tracking and unsubscribe links (and VERP tokens): made (32 random bytes)
   * when the store has none yet, then never changed. Insert-if-absent, so processes or nodes that
   * start together agree on one secret (SQL: INSERT ... ON CONFLICT DO NOTHING, then read).
   * Returns the secret in force.
   */
  ensureTrackingSecret(): Promise<Buffer>;
  /** The tracking secret; rejects when ensureTrackingSecret never ran on this store. */
  trackingSecret(): Promise<Buffer>;
}
