/**
 * Importing webhooks with their signing keys and statuses, and their outbox, and inbound routes
 * (schema/webhooks-idempotency.ts), as repos/webhooks.ts and webhooks-tx.ts write them: every
 * webhook has its status row and its account a webhook_accounts row (the lock creates take);
 * outbox entries arrive unclaimed, due at their own time, the head of each message marked.
 */
import type { TransferRecords } from '../../port/transfer.js';
import type { Tx } from '../client.js';

export async function writeWebhooks(tx: Tx, records: TransferRecords['webhooks'][]): Promise<void> {
  const rows = records.map(({ webhook: w, signingKey, status }) => ({
    id: w.id,
    account_id: w.accountId,
    channel_id: w.channelId,
    created_at_ms: Date.parse(w.createdAt),
    enabled: w.enabled,
    signing_key: signingKey,
    doc: w,
    status,
  }));
  await tx`
    WITH x AS (
      SELECT * FROM jsonb_to_recordset(${tx.json(rows as never)}) AS x(id text, account_id text, channel_id text,
        created_at_ms int8, enabled boolean, signing_key text, doc jsonb, status jsonb)
    ), w AS (
      INSERT INTO webhooks (id, account_id, channel_id, created_at_ms, enabled, signing_key, doc)
      SELECT id, account_id, channel_id, created_at_ms, enabled, signing_key, doc FROM x
    ), a AS (
      INSERT INTO webhook_accounts (account_id) SELECT DISTINCT account_id FROM x ON CONFLICT DO NOTHING
    )
    INSERT INTO webhook_status (webhook_id, doc) SELECT id, status FROM x`;
}

export async function writeOutbox(tx: Tx, records: TransferRecords['webhookOutbox'][]): Promise<void> {
  const rows = records.map(({ entry: e, accountId, channelId, head }) => ({
    webhook_id: e.webhookId,
    message_id: e.messageId,
    seq: e.seq,
    part: e.part ?? -1,
    account_id: accountId,
    channel_id: channelId,
    head,
    due_at_ms: e.dueAtMs,
    doc: e,
  }));
  await tx`
    INSERT INTO webhook_outbox (webhook_id, message_id, seq, part, account_id, channel_id, head, due_at_ms, doc)
    SELECT * FROM jsonb_to_recordset(${tx.json(rows as never)}) AS x(webhook_id text, message_id text, seq int8, part int4,
      account_id text, channel_id text, head boolean, due_at_ms int8, doc jsonb)`;
}

/** Inbound routes with their keys, as repos/inbound-routes.ts writes them (schema/inbound.ts). */
export async function writeInboundRoutes(tx: Tx, records: TransferRecords['inboundRoutes'][]): Promise<void> {
  const rows = records.map(({ route: r, signingKey }) => ({
    id: r.id,
    account_id: r.accountId,
    channel_id: r.channelId,
    domain_id: r.domainId,
    address: r.address,
    created_at_ms: Date.parse(r.createdAt),
    signing_key: signingKey,
    doc: r,
  }));
  await tx`
    INSERT INTO inbound_routes (id, account_id, channel_id, domain_id, address, created_at_ms, signing_key, doc)
    SELECT * FROM jsonb_to_recordset(${tx.json(rows as never)}) AS x(id text, account_id text, channel_id text, domain_id text,
      address text, created_at_ms int8, signing_key text, doc jsonb)`;
}
