/**
 * The tables of the accounts aggregates (part of migration 1, schema/index.ts): accounts, API
 * keys, dashboard sessions and the store's own marks (meta). Until the first release every
 * table is created here; afterwards a change is a new migration.
 *
 * Ids are text (a malformed id is simply not found, port rule) in the "C" collation, so that
 * ORDER BY id is code-unit order, as the LMDB engine's keys and the contract suite sort them.
 * Times are int8 milliseconds beside the record's own ISO strings in `doc`.
 */
export const SQL = `
CREATE TABLE accounts (
  id text COLLATE "C" PRIMARY KEY,
  doc jsonb NOT NULL
);

CREATE TABLE api_keys (
  id text COLLATE "C" PRIMARY KEY,
  account_id text COLLATE "C" NOT NULL,
  channel_id text COLLATE "C",
  hash text COLLATE "C" NOT NULL,
  created_at_ms int8 NOT NULL,
  revoked_at_ms int8,
  doc jsonb NOT NULL
);
-- findByToken, on every request and SMTP AUTH: one unique index probe.
CREATE UNIQUE INDEX api_keys_hash ON api_keys (hash);
-- listLive and the per-account limit's count (live keys only, oldest first).
CREATE INDEX api_keys_account_live ON api_keys (account_id, created_at_ms, id) WHERE revoked_at_ms IS NULL;
-- Channel deletion removes the channel's keys; the operator's list by channel.
CREATE INDEX api_keys_channel ON api_keys (channel_id) WHERE channel_id IS NOT NULL;

-- id: the SHA-256 of the session token (the token is never stored). Every field of the
-- record is a column (no doc): touch moves one of them.
CREATE TABLE dashboard_sessions (
  id text COLLATE "C" PRIMARY KEY,
  key_id text COLLATE "C" NOT NULL,
  account_id text COLLATE "C" NOT NULL,
  created_at_ms int8 NOT NULL,
  last_seen_at_ms int8 NOT NULL,
  expires_at_ms int8 NOT NULL
);

-- The first-start marks (bootstrappedAt, initialKeyPending).
CREATE TABLE meta (
  key text COLLATE "C" PRIMARY KEY,
  value jsonb NOT NULL
);

-- Secrets the daemon made itself (the tracking HMAC key), as bytes.
CREATE TABLE secrets (
  name text COLLATE "C" PRIMARY KEY,
  value bytea NOT NULL
);
`;
