/**
 * Every LMDB sub-database and its key layout, in one place. Keys are lmdb-js ordered-binary
 * values: arrays sort element by element, which gives prefix scans for the index databases.
 * Values are msgpack (lmdb-js default).
 */
export const DB_NAMES = [
  /** string → any: schema version, generated secrets, the initial account id. */
  'meta',
  /** accountId → Account */
  'accounts',
  /** keyId → ApiKey */
  'apiKeys',
  /** sha256(token) hex → keyId */
  'apiKeyHashes',
  /** channelId → Channel */
  'channels',
  /** [accountId, createdAtMs, channelId] → 1: the account's channels in creation order. */
  'accountChannels',
  /** messageId → MessageRecord (envelope, content summary, status). */
  'messages',
  /** messageId → Buffer: the signed RFC 5322 message as it will be sent. */
  'bodies',
  /** jobId → DeliveryJob: one per message and recipient domain. */
  'jobs',
  /** [dueAtMs, jobId] → 1: queued jobs by due time, so the dispatcher never scans all jobs. */
  'jobsDue',
  /** seq (integer, increasing) → EventRecord: the append-only event log. */
  'events',
  /** [messageId, seq] → 1: a message's events in order. */
  'messageEvents',
  /** [channelId, mailType, email] → SuppressionRecord */
  'suppressions',
  /** [accountId, key] → IdempotencyRecord */
  'idempotency',
  /** [expiresAtMs, accountId, key] → 1: idempotency records by expiry, for the sweeper. */
  'idempotencyExpiry',
  /** array key → integer counter, e.g. ['sent', accountId] for the pending-account send limit. */
  'counters',
  /** broadcastId → BroadcastRecord (the accepted request and the expansion cursor). */
  'broadcasts',
  /** [broadcastId, index] → one normalized entry of the broadcast's messages array. */
  'broadcastEntries',
  /** [createdAtMs, broadcastId] → 1: broadcasts still being expanded into messages, oldest first. */
  'broadcastQueue',
] as const;

export type DbName = (typeof DB_NAMES)[number];

/** Bumped when a layout changes incompatibly; the store refuses to open a newer one. */
export const SCHEMA_VERSION = 1;

/** Upper bound for the last element of a prefix scan over array keys. */
export const KEY_MAX = '\uffff';
