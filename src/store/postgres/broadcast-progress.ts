/**
 * A broadcast's expansion batch, inside the submission commit (MessagesPort.commit
 * `broadcastProgress`; store/lmdb/broadcasts.ts advanceBroadcastInTxn): the cursor moves from
 * `from` to `cursor`, the expanded entries go, the failure and suppression rows are added and
 * the record counts the batch's messages.
 *
 * Atomic across nodes: the commit locks the broadcast's row first (broadcast-rows.ts
 * lockBroadcast) and checks it there: a canceled broadcast (or one of a deleted channel) refuses
 * the batch with BroadcastCanceled, a cursor that is not at `from` with an Error, before anything
 * is written. Of batches racing from one cursor, the first to lock moves it; the others then read
 * the moved cursor and roll back.
 */
import { BroadcastCanceled, type BroadcastFailure, type BroadcastProgress, type BroadcastRecord } from '../port/broadcasts.js';
import type { Tx } from './client.js';
import { isChannelDeleted } from './channels-tx.js';
import { jsonParam, lockBroadcast, putBroadcast } from './broadcast-rows.js';
import { bumpBroadcastCounters } from './messages-tx.js';

/** The batch's broadcast, locked and checked: the commit calls it before writing anything. */
export async function lockBroadcastForBatch(tx: Tx, p: BroadcastProgress): Promise<BroadcastRecord> {
  const b = await lockBroadcast(tx, p.broadcastId);
  // Its channel deleted (the tombstone committed before the DELETE's 204): nothing more is made of it.
  if (!b || b.canceledAt || (await isChannelDeleted(tx, b.channelId))) throw new BroadcastCanceled(p.broadcastId);
  if (b.cursor !== p.from) throw new Error(`broadcast ${b.id}: a batch from entry ${p.from} came while the cursor is at ${b.cursor}`);
  return b;
}

/**
 * Records the batch on the locked record `b`: `messages` made in it, of which `finished` are
 * finished already (sandbox messages are sent at the commit).
 */
export async function advanceBroadcast(tx: Tx, b: BroadcastRecord, p: BroadcastProgress, made: { messages: number; finished: number }): Promise<void> {
  // Sent together (pipelined in the transaction): only the record waits for the suppressed count.
  const [, , suppressed] = await Promise.all([
    tx`DELETE FROM broadcast_entries WHERE broadcast_id = ${b.id} AND idx >= ${b.cursor} AND idx < ${p.cursor}`,
    putFailures(tx, b, p.failures),
    addSuppressed(tx, b, p.suppressed),
    made.finished > 0 ? bumpBroadcastCounters(tx, b.id, { finished: made.finished }) : undefined,
  ]);
  await putBroadcast(tx, {
    ...b,
    cursor: p.cursor,
    messages: b.messages + made.messages,
    skipped: b.skipped + p.skipped,
    failed: (b.failed ?? 0) + p.failures.length - p.skipped,
    suppressed: (b.suppressed ?? 0) + suppressed,
    state: p.cursor >= b.total ? 'done' : 'expanding',
  });
}

/** Failure rows by entry index (a later row for one index replaces the earlier, as LMDB's put). */
export async function putFailures(tx: Tx, b: Pick<BroadcastRecord, 'id' | 'accountId' | 'channelId'>, failures: readonly BroadcastFailure[]): Promise<void> {
  if (failures.length === 0) return;
  const byIndex = new Map(failures.map((f) => [f.index, f]));
  await tx`
    INSERT INTO broadcast_failures (broadcast_id, idx, account_id, channel_id, doc)
    SELECT ${b.id}, (f->>'index')::int4, ${b.accountId}, ${b.channelId}, f
    FROM jsonb_array_elements(${jsonParam(tx, [...byIndex.values()])}::jsonb) AS f
    ON CONFLICT (broadcast_id, idx) DO UPDATE SET doc = EXCLUDED.doc`;
}

/** The suppressed recipients not recorded yet (counted once across batches); returns how many were new. */
async function addSuppressed(tx: Tx, b: BroadcastRecord, emails: readonly string[]): Promise<number> {
  if (emails.length === 0) return 0;
  const rows = await tx`
    INSERT INTO broadcast_suppressions (broadcast_id, email, account_id, channel_id)
    SELECT DISTINCT ${b.id}, e, ${b.accountId}, ${b.channelId} FROM unnest(${[...emails]}::text[]) AS e
    ON CONFLICT DO NOTHING
    RETURNING 1`;
  return rows.length;
}
