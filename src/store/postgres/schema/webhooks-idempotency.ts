/**
 * The tables of the webhooks-idempotency aggregates (part of migration 1, schema/index.ts):
 * webhooks with their signing keys and delivery status, the outbox of their deliveries, and the
 * idempotency keys of the send API with their claims. Until the first release every table is
 * created here; afterwards a change is a new migration.
 *
 * Ids are text in the "C" collation (code-unit order, as the LMDB engine's keys). No foreign
 * keys to other groups' tables: an event-appending transaction must never fail because a webhook
 * was deleted beside it (the claim drops what is left of a deleted webhook, as LMDB's does).
 */
export const SQL = `
-- The Webhook record in doc (no key material); the signing key apart in its column, read only
-- by signingKey() and the outbox claim (store/port/webhooks.ts).
CREATE TABLE webhooks (
  id text COLLATE "C" PRIMARY KEY,
  account_id text COLLATE "C" NOT NULL,
  -- null: every channel of the account.
  channel_id text COLLATE "C",
  created_at_ms int8 NOT NULL,
  enabled boolean NOT NULL,
  signing_key text NOT NULL,
  doc jsonb NOT NULL
);
-- list (creation order), the limit's count, and the per-event look-up of enqueueWebhookEvents.
CREATE INDEX webhooks_account ON webhooks (account_id, created_at_ms, id);
-- The channel delete removes the webhooks bound to it (removeChannelWebhooks).
CREATE INDEX webhooks_channel ON webhooks (channel_id) WHERE channel_id IS NOT NULL;

-- One row per account that ever created a webhook: create locks it (ON CONFLICT DO UPDATE) so
-- that counting and inserting are atomic across nodes, whether or not an accounts row exists.
CREATE TABLE webhook_accounts (
  account_id text COLLATE "C" PRIMARY KEY
);

-- WebhookStatus of each webhook (EMPTY_STATUS until the first attempt). Its row lock orders the
-- attempts recorded for one webhook, and a delete after them.
CREATE TABLE webhook_status (
  webhook_id text COLLATE "C" PRIMARY KEY,
  doc jsonb NOT NULL
);

-- One OutboxEntry (doc) waiting for one webhook. Only the oldest entry of a (webhook, message)
-- is head, and only heads are ever due (order per message). claimed_until_ms is the claim:
-- an entry in flight on some node is not claimed again before it (a lease, so that a node that
-- died gives its claims back; webhook-outbox-claim.ts).
CREATE TABLE webhook_outbox (
  webhook_id text COLLATE "C" NOT NULL,
  message_id text COLLATE "C" NOT NULL,
  seq int8 NOT NULL,
  -- OutboxEntry.part, or -1 for an entry of the whole event (part absent).
  part int4 NOT NULL,
  account_id text COLLATE "C" NOT NULL,
  channel_id text COLLATE "C" NOT NULL,
  head boolean NOT NULL,
  due_at_ms int8 NOT NULL,
  claimed_until_ms int8 NOT NULL DEFAULT 0,
  -- Which claimDue holds it (the fence of recordAttempt and release); null when unclaimed.
  claim_token text COLLATE "C",
  doc jsonb NOT NULL,
  PRIMARY KEY (webhook_id, message_id, seq, part)
);
-- The claim: per webhook, its heads in due order (LMDB's webhookDue key order).
CREATE INDEX webhook_outbox_due ON webhook_outbox (webhook_id, due_at_ms, message_id, seq, part) WHERE head;
-- The channel purge deletes a channel's rows by channel_id.
CREATE INDEX webhook_outbox_channel ON webhook_outbox (channel_id);

-- IdempotencyRecord (doc) per account and key, written by the commit verbs with their effect.
CREATE TABLE idempotency_records (
  account_id text COLLATE "C" NOT NULL,
  key text COLLATE "C" NOT NULL,
  expires_at_ms int8 NOT NULL,
  doc jsonb NOT NULL,
  PRIMARY KEY (account_id, key)
);
-- The sweep, oldest expiry first.
CREATE INDEX idempotency_records_expiry ON idempotency_records (expires_at_ms);

-- A request's claim on a key (IdempotencyPort.claim), seen by every node, until released or
-- until until_ms (the lease: a node that died does not hold the key for ever).
CREATE TABLE idempotency_claims (
  account_id text COLLATE "C" NOT NULL,
  key text COLLATE "C" NOT NULL,
  claim_no text COLLATE "C" NOT NULL,
  until_ms int8 NOT NULL,
  PRIMARY KEY (account_id, key)
);
-- The sweep of claims left by nodes that died.
CREATE INDEX idempotency_claims_until ON idempotency_claims (until_ms);
`;
