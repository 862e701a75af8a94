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
] as const;

export type DbName = (typeof DB_NAMES)[number];

/** Bumped when a layout changes incompatibly; the store refuses to open a newer one. */
export const SCHEMA_VERSION = 1;

/** Upper bound for the last element of a prefix scan over array keys. */
export const KEY_MAX = '\uffff';
