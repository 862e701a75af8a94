/**
 * The tables of the channels-domains aggregates (part of migration 1, schema/index.ts):
 * channels with their tombstones, the pending purges of deleted channels, sending domains and
 * their DKIM private keys. Until the first release every table is created here; afterwards a
 * change is a new migration.
 *
 * Ids are text in the "C" collation (code-unit order, as the LMDB engine's keys).
 */
export const SQL = `
-- A deleted channel keeps its row (the tombstone: deleted_at_ms set, doc with deletedAt), so
-- domains still list it as deleted (spec 2.2).
CREATE TABLE channels (
  id text COLLATE "C" PRIMARY KEY,
  account_id text COLLATE "C" NOT NULL,
  -- The name lower-cased by JavaScript (as the LMDB engine compares it, whatever the
  -- database's locale), for list's substring filter.
  name_lc text NOT NULL,
  delivery_type text NOT NULL,
  created_at_ms int8 NOT NULL,
  deleted_at_ms int8,
  doc jsonb NOT NULL
);
-- list (oldest first) and the per-account limit's count: live channels only.
CREATE INDEX channels_account_live ON channels (account_id, created_at_ms, id) WHERE deleted_at_ms IS NULL;
-- The tombstones, which every node's deleted-channel set starts from (loadDeletedChannels).
CREATE INDEX channels_deleted ON channels (id) WHERE deleted_at_ms IS NOT NULL;

-- A deleted channel whose data is still being purged (ChannelsPort.purgeBatch); the row goes
-- when the purge is done.
CREATE TABLE channel_purges (
  channel_id text COLLATE "C" PRIMARY KEY,
  account_id text COLLATE "C" NOT NULL,
  deleted_at_ms int8 NOT NULL
);
-- Account-wide reads skip the channels being purged (purgingChannelsOf).
CREATE INDEX channel_purges_account ON channel_purges (account_id);

-- The domain record (DNS records, statuses, links) in doc; the private keys apart in dkim_keys,
-- so no read for display ever holds key material (store/port/domains.ts).
CREATE TABLE domains (
  id text COLLATE "C" PRIMARY KEY,
  account_id text COLLATE "C" NOT NULL,
  -- Normalized (lower-case A-labels, no root dot): looked up by exact name.
  name text COLLATE "C" NOT NULL,
  created_at_ms int8 NOT NULL,
  -- domain/sending-domain.ts needsRecheck of doc, kept with every write of doc.
  recheck boolean NOT NULL,
  doc jsonb NOT NULL
);
-- One domain per name and account (create's insert-if-absent; 23505 is the duplicate 422).
CREATE UNIQUE INDEX domains_account_name ON domains (account_id, name);
CREATE INDEX domains_account_created ON domains (account_id, created_at_ms, id);
CREATE INDEX domains_recheck ON domains (id) WHERE recheck;

CREATE TABLE dkim_keys (
  domain_id text COLLATE "C" NOT NULL,
  selector text COLLATE "C" NOT NULL,
  private_key_pem text NOT NULL,
  PRIMARY KEY (domain_id, selector)
);
`;
