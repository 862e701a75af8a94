/**
 * Retention's message side (RetentionPort.sweepBatch, as the LMDB engine's retention.ts): a
 * message goes with its accepted event (record, body, client Message-ID entries: messages-tx.ts;
 * its jobs: queue-tx.ts). The walk never passes the accepted event of a message not finished
 * (event-retention.ts, domain/retention-hold.ts); should one have open jobs all the same, it is
 * parked in retention_pending, as an older version parked those it passed, and removed by a
 * later sweep once its delivery ended. Engagement report marks age out with the events
 * they stand for (engagement-marks.ts). Received messages (issue 33) go by their own age, once
 * posted or failed (expireInbound).
 *
 * Each step is bounded by the sweep's batch and runs inside the sweep's one short transaction.
 * The message rows are locked (FOR UPDATE, in id order) before their open-job count decides:
 * an outcome closing a job on another node waits or has committed, so a message is either seen
 * finished (and removed) or parked (and retried); it is never removed while a job is open.
 */
import type { Tx } from './client.js';
import { forgetMessages } from './messages-tx.js';
import { removeJobsOfMessages } from './queue-tx.js';

interface LockedMessage {
  id: string;
  account_id: string;
  channel_id: string;
  open_jobs: number;
  created_ms: number;
}

async function lockMessages(tx: Tx, ids: readonly string[]): Promise<LockedMessage[]> {
  if (ids.length === 0) return [];
  return tx<LockedMessage[]>`
    SELECT id, account_id, channel_id, open_jobs, created_ms FROM messages
    WHERE id = ANY(${[...new Set(ids)]}::text[]) ORDER BY id FOR UPDATE`;
}

/** A finished message leaves the store: record, body, client ids, jobs, and its parked entry. */
export async function purgeMessages(tx: Tx, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await removeJobsOfMessages(tx, ids);
  await forgetMessages(tx, ids);
  await tx`DELETE FROM retention_pending WHERE message_id = ANY(${ids as string[]}::text[])`;
}

/**
 * The messages whose accepted events the sweep removed: the finished ones go, the others are
 * parked. Resolves with how many went (a message already gone counts nothing).
 */
export async function expireMessages(tx: Tx, messageIds: readonly string[]): Promise<number> {
  const rows = await lockMessages(tx, messageIds);
  const open = rows.filter((m) => m.open_jobs > 0);
  if (open.length > 0) {
    await tx`
      INSERT INTO retention_pending (message_id, account_id, channel_id, created_ms)
      SELECT * FROM unnest(${open.map((m) => m.id)}::text[], ${open.map((m) => m.account_id)}::text[],
        ${open.map((m) => m.channel_id)}::text[], ${open.map((m) => m.created_ms)}::int8[])
      ON CONFLICT (message_id) DO NOTHING`;
  }
  const done = rows.filter((m) => m.open_jobs === 0).map((m) => m.id);
  await purgeMessages(tx, done);
  return done.length;
}

/**
 * Up to `max` parked messages whose delivery has ended since (or whose record is gone, by the
 * channel purge): they leave. Only those are read (a parked message still delivering is skipped
 * by the query, so many of them never hide a finished one). Resolves with how many messages went.
 */
export async function retryParked(tx: Tx, max: number): Promise<number> {
  const ready = await tx<{ message_id: string; gone: boolean }[]>`
    SELECT p.message_id, m.id IS NULL AS gone FROM retention_pending p LEFT JOIN messages m ON m.id = p.message_id
    WHERE m.id IS NULL OR m.open_jobs = 0
    ORDER BY p.message_id LIMIT ${max}`;
  const gone = ready.filter((r) => r.gone).map((r) => r.message_id);
  if (gone.length > 0) await tx`DELETE FROM retention_pending WHERE message_id = ANY(${gone}::text[])`;
  const locked = await lockMessages(tx, ready.filter((r) => !r.gone).map((r) => r.message_id));
  const done = locked.filter((m) => m.open_jobs === 0).map((m) => m.id);
  await purgeMessages(tx, done);
  return done.length;
}

/** Up to `max` report marks older than the cutoff go (their events are past retention). Resolves with how many. */
export async function expireReportMarks(tx: Tx, cutoffMs: number, max: number): Promise<number> {
  const rows = await tx`
    DELETE FROM engagement_report_marks WHERE (message_id, event_type, recipient) IN (
      SELECT message_id, event_type, recipient FROM engagement_report_marks WHERE at_ms < ${cutoffMs} LIMIT ${max})`;
  return rows.count;
}

/**
 * Up to `max` received messages (issue 33) received before the cutoff go, oldest first, their
 * raw bytes with their row: only posted or failed ones (no due time), never one still `received`.
 * The rows are locked first: a retry requeueing one meanwhile either committed (the row is due
 * again and no longer matches when rechecked) or waits and then finds it gone. Resolves with how many.
 */
export async function expireInbound(tx: Tx, cutoffMs: number, max: number): Promise<number> {
  const rows = await tx`
    DELETE FROM inbound_messages WHERE id IN (
      SELECT id FROM inbound_messages WHERE due_at_ms IS NULL AND received_at_ms < ${cutoffMs}
      ORDER BY received_at_ms, id LIMIT ${max} FOR UPDATE)
    AND due_at_ms IS NULL`;
  return rows.count;
}
