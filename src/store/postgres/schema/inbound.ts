/**
 * The tables of the inbound aggregates (part of migration 1, schema/index.ts): the routes of
 * issue 33. Until the first release every table is created here; afterwards a change is a new
 * migration.
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
