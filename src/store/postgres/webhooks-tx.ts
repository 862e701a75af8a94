/**
 * What other groups of the PostgreSQL engine do with webhooks, the outbox and idempotency keys
 * inside their own transaction (shared brief: one file per owner, the transaction first):
 *  - appendEvents (event-log.ts) queues each event for the webhooks that want it, in its write:
 *    an event and its outbox entries commit together (store/port/webhooks.ts);
 *  - a submission commit stores the idempotency record with the effect it remembers
 *    (store/port/idempotency.ts);
 *  - the channel delete removes the webhooks bound to the channel (spec 4.5).
 */
import { AppError } from '../../domain/errors.js';
import type { EventRecord } from '../../domain/types.js';
import { payloadsOf, webhookWants, type OutboxEntry, type Webhook } from '../../domain/webhook.js';
import { wakeChannel, wakePayload } from '../../domain/wake-channel.js';
import type { IdempotencyWrite } from '../port/idempotency.js';
import type { Tx } from './client.js';
import { timeOrderedUuid } from '../../domain/uuid.js';

/** One outbox row as enqueueWebhookEvents sends it (jsonb_to_recordset below). */
interface OutboxRow {
  webhook_id: string;
  message_id: string;
  seq: number;
  part: number;
  account_id: string;
  channel_id: string;
  /** The first entry of its (webhook, message) in this batch: head unless one is stored already. */
  first: boolean;
  due_at_ms: number;
  doc: OutboxEntry;
}

/**
 * Inside the event's write: an outbox entry for every enabled webhook of the account that wants
 * the event (webhookWants), one per payload (payloadsOf), as LMDB's enqueueWebhookEventsInTxn.
 * No cache of "this account has no webhooks" (a node-local one would be wrong in a cluster):
 * that case costs one index probe (webhooks_account). Otherwise the whole batch is one INSERT,
 * then a NOTIFY of 'outbox' on the wake channel (domain/wake-channel.ts) when it added entries:
 * PostgreSQL delivers it only if and when the transaction commits.
 *
 * The head flag (only the oldest entry of a webhook and message is due): the INSERT locks the
 * stored entries of the pair FOR KEY SHARE, which waits for a recordAttempt deleting the head
 * in flight; READ COMMITTED then skips the deleted row, so the new entry becomes head exactly
 * when no entry is left, and a recordAttempt that commits after this insert sees the new entry
 * when it picks the next head. Appenders themselves are serialized by the event log's head row
 * (event-log.ts), so two batches never insert for one message at once.
 */
export async function enqueueWebhookEvents(tx: Tx, events: readonly EventRecord[]): Promise<void> {
  if (events.length === 0) return;
  const accounts = [...new Set(events.map((e) => e.accountId))];
  const webhooks = await tx<{ doc: Webhook }[]>`
    SELECT doc FROM webhooks WHERE account_id = ANY(${accounts}::text[]) AND enabled ORDER BY account_id, created_at_ms, id`;
  if (webhooks.length === 0) return;
  const rows = outboxRows(events, webhooks.map((w) => w.doc), Date.now());
  if (rows.length === 0) return;
  const added = await tx<{ schema: string }[]>`
    WITH r AS (
      SELECT * FROM jsonb_to_recordset(${tx.json(rows as never)}::jsonb) AS r(
        webhook_id text, message_id text, seq int8, part int4, account_id text, channel_id text,
        first boolean, due_at_ms int8, doc jsonb)
    ),
    stored AS MATERIALIZED (
      SELECT o.webhook_id, o.message_id FROM webhook_outbox o
      WHERE (o.webhook_id, o.message_id) IN (SELECT r.webhook_id, r.message_id FROM r WHERE r.first)
      FOR KEY SHARE OF o
    ),
    ins AS (
      INSERT INTO webhook_outbox (webhook_id, message_id, seq, part, account_id, channel_id, head, due_at_ms, doc)
      SELECT r.webhook_id, r.message_id, r.seq, r.part, r.account_id, r.channel_id,
        r.first AND NOT EXISTS (SELECT 1 FROM stored s WHERE s.webhook_id = r.webhook_id AND s.message_id = r.message_id),
        r.due_at_ms, r.doc
      FROM r
      RETURNING 1
    )
    SELECT current_schema() AS schema FROM (SELECT 1 FROM ins LIMIT 1) AS added`;
  const schema = added[0]?.schema;
  if (schema) await tx`SELECT pg_notify(${wakeChannel(schema)}, ${wakePayload('store', 'outbox')})`;
}

/** The rows of a batch of events, in event order; `first` marks the first of each (webhook, message). */
function outboxRows(events: readonly EventRecord[], webhooks: readonly Webhook[], now: number): OutboxRow[] {
  const rows: OutboxRow[] = [];
  const seen = new Set<string>();
  for (const e of events) {
    for (const w of webhooks) {
      if (!webhookWants(w, e)) continue;
      for (const { part, payload } of payloadsOf(e)) {
        const doc: OutboxEntry = { id: timeOrderedUuid(), webhookId: w.id, messageId: e.messageId, seq: e.seq, part, createdAtMs: now, dueAtMs: now, attempts: 0, payload };
        if (part === undefined) delete doc.part;
        const pair = `${w.id}\u0000${e.messageId}`;
        rows.push({ webhook_id: w.id, message_id: e.messageId, seq: e.seq, part: part ?? -1, account_id: e.accountId, channel_id: e.channelId, first: !seen.has(pair), due_at_ms: now, doc });
        seen.add(pair);
      }
    }
  }
  return rows;
}

/**
 * Inside a submission commit: the key's record, insert-if-absent in one statement. A key holding
 * a live record already (another request's, whose claim this one should have seen) throws
 * conflict and the caller's whole transaction rolls back; an expired one is replaced (LMDB's
 * putIdempotencyInTxn). ON CONFLICT waits for a concurrent insert of the key, so of two commits
 * racing on any nodes exactly one stores its record.
 */
export async function putIdempotency(tx: Tx, write: IdempotencyWrite): Promise<void> {
  const { accountId, key, record } = write;
  const createdAtMs = Date.parse(record.createdAt);
  const rows = await tx`
    INSERT INTO idempotency_records (account_id, key, expires_at_ms, doc)
    VALUES (${accountId}, ${key}, ${record.expiresAtMs}, ${tx.json(record as never)})
    ON CONFLICT (account_id, key) DO UPDATE SET expires_at_ms = excluded.expires_at_ms, doc = excluded.doc
      WHERE idempotency_records.expires_at_ms <= ${createdAtMs}
    RETURNING 1`;
  if (rows.length === 0) throw new AppError('conflict', 'This idempotency key was used by another request at the same time');
}

/**
 * Inside the channel delete: the webhooks bound to the channel go with it (spec 4.5), with their
 * keys, statuses and outboxes (LMDB's removeChannelWebhooksInTxn). Returns how many.
 */
export async function removeChannelWebhooks(tx: Tx, channelId: string): Promise<number> {
  return removeWebhooks(tx, { channelId });
}

/**
 * Removes webhooks (one by id, or those bound to a channel) with their keys, statuses and
 * outboxes; returns how many. The status rows go in the first statement and the outbox in the
 * second, the order recordAttempt locks them in (webhook-outbox-record.ts), so the two never
 * deadlock.
 */
export async function removeWebhooks(tx: Tx, by: { id: string } | { channelId: string }): Promise<number> {
  const gone = await tx<{ id: string }[]>`
    WITH w AS (
      DELETE FROM webhooks WHERE ${'id' in by ? tx`id = ${by.id}` : tx`channel_id = ${by.channelId}`} RETURNING id
    )
    DELETE FROM webhook_status s USING w WHERE s.webhook_id = w.id RETURNING s.webhook_id AS id`;
  if (gone.length === 0) return 0;
  await tx`DELETE FROM webhook_outbox WHERE webhook_id = ANY(${gone.map((g) => g.id)}::text[])`;
  return gone.length;
}
