/**
 * What other groups of the PostgreSQL engine do to the accounts aggregates inside their own
 * transaction (shared brief: one file per owner, each function takes the transaction first).
 */
import type { Db, Tx } from './client.js';

/**
 * Locks the account's row until the transaction ends (FOR UPDATE), so that a per-account limit
 * is counted and inserted atomically across nodes: every creation under a limit (channels,
 * domains, API keys) takes this lock first, so under READ COMMITTED the count it reads next
 * already holds every concurrent creation that committed before it got the lock, and none can
 * commit between its count and its insert. An id without an account row (the port does not
 * require one) is locked by a transaction-scoped advisory lock on the id instead.
 */
export async function lockAccount(tx: Tx, accountId: string): Promise<void> {
  const rows = await tx`SELECT 1 FROM accounts WHERE id = ${accountId} FOR UPDATE`;
  if (rows.length === 0) await tx`SELECT pg_advisory_xact_lock(hashtextextended(${'account:' + accountId}, 0))`;
}

/**
 * Channel deletion (ChannelsPort.delete): the channel's API keys go in the delete's commit, as
 * the LMDB engine's removeChannelKeysInTxn does (removed, not only revoked: the port's delete
 * says "its API keys"). From that commit on no token finds them (findByToken reads the table,
 * no cache). `now` is unused: kept for callers that pass the delete's time.
 */
export async function revokeChannelKeys(tx: Tx, channelId: string, _now?: number): Promise<number> {
  const rows = await tx`DELETE FROM api_keys WHERE channel_id = ${channelId} RETURNING id`;
  return rows.length;
}

/** Whether a live (not revoked) key has this id (a dashboard session checks its key). */
export async function isLiveKey(db: Db, keyId: string): Promise<boolean> {
  const rows = await db`SELECT 1 FROM api_keys WHERE id = ${keyId} AND revoked_at_ms IS NULL`;
  return rows.length > 0;
}
