/**
 * WebhookOutboxPort.recordAttempt and release over PostgreSQL: the behaviour of LMDB's
 * recordAttempt (store/lmdb/webhook-outbox.ts), one transaction per attempt.
 *
 * Locks, in this order (the webhook delete takes them in the same order: webhooks-tx.ts):
 * the webhook's status row (it exists exactly while the webhook does, and orders the attempts
 * recorded for one webhook), then the entry (FOR UPDATE: an event appended for the same message
 * meanwhile waits for it, then sees whether an entry is left; webhooks-tx.ts).
 */
import { EMPTY_STATUS, type OutboxEntry, type WebhookStatus } from '../../domain/webhook.js';
import type { AttemptOutcome, AttemptRecord } from '../port/webhooks.js';
import type { Tx } from './client.js';
import type { PgContext } from './context.js';

/** The primary key of an entry's row (part -1: an entry of the whole event). */
export function rowKey(e: Pick<OutboxEntry, 'webhookId' | 'messageId' | 'seq' | 'part'>): { webhook_id: string; message_id: string; seq: number; part: number } {
  return { webhook_id: e.webhookId, message_id: e.messageId, seq: e.seq, part: e.part ?? -1 };
}

/**
 * One commit: the entry is removed (success, give-up) or rescheduled, the next entry of its
 * message becomes due, the webhook's status is updated, the claim ends. 'gone' when the webhook
 * or the entry is gone, or when `claim` (the claim the caller got the entry from: a fencing id,
 * not a secret) no longer holds it: the lease ended and another node claimed it again, and that node records its own
 * attempt (a fence LMDB does not need: its claims never lapse).
 */
export async function recordAttempt(ctx: PgContext, r: AttemptRecord, claim: string | undefined): Promise<AttemptOutcome> {
  const k = rowKey(r.entry);
  return ctx.begin(async (tx) => {
    const [st] = await tx<{ doc: WebhookStatus }[]>`SELECT doc FROM webhook_status WHERE webhook_id = ${k.webhook_id} FOR UPDATE`;
    if (!st) return 'gone';
    const [row] = await tx<{ doc: OutboxEntry; held_by: string | null }[]>`
      SELECT doc, claim_token AS held_by FROM webhook_outbox
      WHERE webhook_id = ${k.webhook_id} AND message_id = ${k.message_id} AND seq = ${k.seq} AND part = ${k.part}
      FOR UPDATE`;
    if (!row || (claim !== undefined && row.held_by !== claim)) return 'gone';
    const e = row.doc;
    const status: WebhookStatus = { ...EMPTY_STATUS, ...st.doc };
    status.lastResponse = { statusCode: r.statusCode, error: r.error, at: new Date(r.atMs).toISOString() };
    status.lastEvent = e.payload.eventType;
    let outcome: AttemptOutcome;
    if (r.error === null) {
      status.succeeded++;
      status.consecutiveFailures = 0;
      outcome = 'done';
    } else {
      status.failedAttempts++;
      status.consecutiveFailures++;
      if (r.retryAtMs === undefined) status.failed++;
      outcome = r.retryAtMs === undefined ? 'dropped' : 'retry';
    }
    if (outcome === 'retry') await reschedule(tx, e, r.retryAtMs!);
    else await finishEntry(tx, e);
    await tx`UPDATE webhook_status SET doc = ${tx.json(status as never)} WHERE webhook_id = ${k.webhook_id}`;
    return outcome;
  });
}

/** The next attempt at retryAtMs; the claim ends. */
async function reschedule(tx: Tx, e: OutboxEntry, retryAtMs: number): Promise<void> {
  const k = rowKey(e);
  const next: OutboxEntry = { ...e, attempts: e.attempts + 1, dueAtMs: retryAtMs };
  await tx`
    UPDATE webhook_outbox SET due_at_ms = ${retryAtMs}, claimed_until_ms = 0, claim_token = NULL, doc = ${tx.json(next as never)}
    WHERE webhook_id = ${k.webhook_id} AND message_id = ${k.message_id} AND seq = ${k.seq} AND part = ${k.part}`;
}

/**
 * Removes the entry and makes the next entry of its message head (due), in one statement: the
 * subquery's snapshot still holds the deleted row, hence "after it" rather than "the first".
 */
async function finishEntry(tx: Tx, e: OutboxEntry): Promise<void> {
  const k = rowKey(e);
  await tx`
    WITH d AS (
      DELETE FROM webhook_outbox
      WHERE webhook_id = ${k.webhook_id} AND message_id = ${k.message_id} AND seq = ${k.seq} AND part = ${k.part}
      RETURNING head
    )
    UPDATE webhook_outbox SET head = true
    WHERE (webhook_id, message_id, seq, part) = (
      SELECT n.webhook_id, n.message_id, n.seq, n.part FROM webhook_outbox n
      WHERE n.webhook_id = ${k.webhook_id} AND n.message_id = ${k.message_id} AND (n.seq, n.part) > (${k.seq}::int8, ${k.part}::int4)
      ORDER BY n.seq, n.part LIMIT 1
    ) AND EXISTS (SELECT 1 FROM d WHERE d.head)`;
}

/**
 * Gives claimed entries back unsent: due again at once. With its token an entry is released
 * only if that claim still holds it (not one another node took after the lease ended).
 */
export async function releaseEntries(ctx: PgContext, entries: readonly { entry: OutboxEntry; token: string | undefined }[]): Promise<void> {
  if (entries.length === 0) return;
  const keys = entries.map(({ entry, token }) => ({ ...rowKey(entry), token: token ?? null }));
  await ctx.begin(
    (tx) => tx`
      UPDATE webhook_outbox o SET claimed_until_ms = 0, claim_token = NULL
      FROM jsonb_to_recordset(${tx.json(keys as never)}::jsonb) AS k(webhook_id text, message_id text, seq int8, part int4, token text)
      WHERE o.webhook_id = k.webhook_id AND o.message_id = k.message_id AND o.seq = k.seq AND o.part = k.part
        AND (k.token IS NULL OR o.claim_token = k.token)`,
  );
}
