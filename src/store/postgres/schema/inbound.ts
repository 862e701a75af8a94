/**
 * The tables of the inbound aggregates (migration 2, schema/index.ts): the routes and the
 * received messages of issue 33. Cluster mode was released with migration 1 only, so these are a
 * migration of their own; a later change is a new migration again.
 *
 * Ids are text in the "C" collation (code-unit order, as the LMDB engine's keys). No foreign
 * keys to other groups' tables: the channel and domain deletes remove their routes themselves
 * (inbound-routes-tx.ts), in their own commit, as the LMDB engine's cleanups do.
 */
export const SQL = `
-- The InboundRoute record in doc (no key material); the signing key apart in its column, read
-- only by signingKey() (store/port/inbound-routes.ts).
CREATE TABLE inbound_routes (
  id text COLLATE "C" PRIMARY KEY,
  account_id text COLLATE "C" NOT NULL,
  channel_id text COLLATE "C" NOT NULL,
  domain_id text COLLATE "C" NOT NULL,
  -- Normalized (lower-case, the domain as A-labels; *@domain for a catch-all): match looks
  -- recipients up by it, and one address has one route whatever the account.
  address text COLLATE "C" NOT NULL,
  created_at_ms int8 NOT NULL,
  signing_key text NOT NULL,
  doc jsonb NOT NULL
);
-- match(), and the last word of create's duplicate check (a 23505 is the same 422).
CREATE UNIQUE INDEX inbound_routes_address ON inbound_routes (address);
-- list (creation order) and the limit's count.
CREATE INDEX inbound_routes_account ON inbound_routes (account_id, created_at_ms, id);
-- The channel delete and the domain delete remove their routes; anyOnDomain.
CREATE INDEX inbound_routes_channel ON inbound_routes (channel_id);
CREATE INDEX inbound_routes_domain ON inbound_routes (domain_id);
`;

export const MESSAGES_SQL = `
-- Received messages (store/port/inbound-messages.ts): the InboundMessage record in doc, the raw
-- bytes beside it (TOASTed out of line, read only by raw()), and what the list filters and the
-- claims use in columns. due_at_ms is set while the message is received (the durable outbox of
-- its POSTs); lease is the number of its latest claim, which attempts must carry.
CREATE TABLE inbound_messages (
  id text COLLATE "C" PRIMARY KEY,
  account_id text COLLATE "C" NOT NULL,
  route_id text COLLATE "C" NOT NULL,
  channel_id text COLLATE "C" NOT NULL,
  received_at_ms int8 NOT NULL,
  due_at_ms int8,
  lease int4 NOT NULL DEFAULT 0,
  doc jsonb NOT NULL,
  raw bytea NOT NULL
);
-- Out of line and uncompressed: raw() reads a big message in slices (repos/inbound-messages.ts),
-- and a slice of a compressed value would decompress the whole value each time.
ALTER TABLE inbound_messages ALTER COLUMN raw SET STORAGE EXTERNAL;
-- list: an account's messages newest first, the cursor a row comparison on (received_at_ms, id).
CREATE INDEX inbound_messages_account ON inbound_messages (account_id, received_at_ms DESC, id DESC);
-- claimDue: only messages waiting for a POST are in it.
CREATE INDEX inbound_messages_due ON inbound_messages (due_at_ms, id) WHERE due_at_ms IS NOT NULL;
-- retention: only messages whose processing ended (posted or failed: no due time), oldest first.
CREATE INDEX inbound_messages_finished ON inbound_messages (received_at_ms, id) WHERE due_at_ms IS NULL;
-- the purge of a deleted channel (channel-purge-batch.ts), by channel_id as every table of its data.
CREATE INDEX inbound_messages_channel ON inbound_messages (channel_id);
-- Statistics: routed copies committed per account, UTC day (days since 1970-01-01) and channel,
-- counted in the commit; retention leaves them.
CREATE TABLE inbound_daily_counts (
  account_id text COLLATE "C" NOT NULL,
  day int4 NOT NULL,
  channel_id text COLLATE "C" NOT NULL,
  received int8 NOT NULL,
  PRIMARY KEY (account_id, day, channel_id)
);
CREATE INDEX inbound_daily_counts_channel ON inbound_daily_counts (channel_id);
`;

/**
 * Migration 8: the node holding a received message's claim (store/port/inbound-messages.ts
 * releaseClaims), set by claimDue and cleared by the attempt that ends the claim, so a node's
 * start gives back its own claims at once. Not in doc: doc is the record the port returns. No
 * index of its own: releaseClaims runs once per start over the due index's rows (received
 * messages only), and a nullable column without a default is added without rewriting the table.
 */
export const CLAIM_OWNER_SQL = `
ALTER TABLE inbound_messages ADD COLUMN claim_owner text COLLATE "C";
`;

/**
 * Migration 9: the enabled routes of a domain in creation order, for mail to postmaster@domain
 * that no route matches (RFC 5321 4.5.1; repos/inbound-routes.ts oldestEnabledOnDomain): asked per
 * RCPT on untrusted input, so it must be one index read, and no column or index of migration 2
 * gives it (inbound_routes_domain holds domain ids, the recipient a domain name). On the
 * address's domain part (a route's address has one `@`: quoted local parts are refused) and
 * partial on doc's `enabled`, so a disabled route is not in it. An index on an expression of
 * columns already there: no table rewrite, and the routes are few (maxRoutesPerAccount each).
 */
export const DOMAIN_ENABLED_SQL = `
CREATE INDEX inbound_routes_domain_enabled ON inbound_routes (split_part(address, '@', 2), created_at_ms, id)
  WHERE doc->>'enabled' = 'true';
`;
