/**
 * What other groups' transactions need of messages and broadcasts (the only file of the messages
 * group they import): message records read in a transaction, a message's jobs closing (open-job
 * count and status, as LMDB's closeJobOfMessageInTxn), a broadcast's counters, whether messages
 * wait for the finishing stage, and a message's removal (retention). Each takes the caller's
 * transaction (or the pool for reads) and runs inside it: what the caller commits commits with it.
 */
import type { MessageRecord } from '../../domain/types.js';
import type { Db, Tx } from './client.js';
import { dequeueMessages } from './event-log.js';

/** The records of these messages (those that exist), by id. */
export async function messageRecords(db: Db, ids: readonly string[]): Promise<Map<string, MessageRecord>> {
  const out = new Map<string, MessageRecord>();
  if (ids.length === 0) return out;
  const rows = await db<{ doc: MessageRecord }[]>`SELECT doc FROM messages WHERE id = ANY(${ids as string[]}::text[])`;
  for (const r of rows) out.set(r.doc.id, r.doc);
  return out;
}

/**
 * Jobs of messages finished (delivered, bounced, expired, dropped, canceled, ended unfinished)
 * at `at` (ISO 8601): each message's open-job count goes down by `jobs` (never below 0), and a
 * message with none left is `sent`, finished at the latest `at` of its closes (retention counts
 * from it; store/lmdb/queue-outcome.ts closeJobOfMessageInTxn). A message that leaves the
 * queue here leaves the message list's queue (event-log.ts dequeueMessages) and counts as
 * finished on its broadcast (a broadcast completes once every message it made left the queue). Returns the records as they are now (messages that exist).
 *
 * Atomic across nodes: the rows are locked (FOR UPDATE, in id order so that two batches never
 * wait on each other) before their counts are read and written back in the same transaction.
 */
export async function closeMessageJobs(tx: Tx, closes: readonly { messageId: string; jobs: number; at: string }[]): Promise<MessageRecord[]> {
  const by = new Map<string, { jobs: number; at: string }>();
  for (const c of closes) {
    const seen = by.get(c.messageId);
    by.set(c.messageId, { jobs: (seen?.jobs ?? 0) + c.jobs, at: seen && seen.at > c.at ? seen.at : c.at });
  }
  if (by.size === 0) return [];
  const rows = await tx<{ doc: MessageRecord }[]>`
    SELECT doc FROM messages WHERE id = ANY(${[...by.keys()]}::text[]) ORDER BY id FOR UPDATE`;
  const next = rows.map(({ doc }) => {
    const close = by.get(doc.id)!;
    const openJobs = Math.max(0, doc.openJobs - close.jobs);
    const ended = openJobs === 0 && doc.openJobs > 0 ? { finishedAt: close.at } : {};
    return { before: doc, after: { ...doc, ...ended, openJobs, status: openJobs === 0 ? 'sent' : doc.status } satisfies MessageRecord };
  });
  if (next.length === 0) return [];
  await tx`
    UPDATE messages m SET open_jobs = u.open_jobs, status = u.status,
      doc = m.doc || jsonb_strip_nulls(jsonb_build_object('openJobs', u.open_jobs, 'status', u.status, 'finishedAt', u.finished_at))
    FROM unnest(${next.map((n) => n.after.id)}::text[], ${next.map((n) => n.after.openJobs)}::int4[], ${next.map((n) => n.after.status)}::text[],
      ${next.map((n) => (n.before.openJobs > 0 && n.after.openJobs === 0 ? n.after.finishedAt! : null))}::text[])
      AS u(id, open_jobs, status, finished_at)
    WHERE m.id = u.id`;
  const left = next.filter(({ before, after }) => before.openJobs > 0 && after.openJobs === 0).map((n) => n.after);
  // Out of the message list's queue (the events group's message_queue) once sent.
  await dequeueMessages(tx, left.map((m) => m.id));
  const finished = new Map<string, number>();
  for (const m of left) if (m.broadcastId) finished.set(m.broadcastId, (finished.get(m.broadcastId) ?? 0) + 1);
  for (const [broadcastId, n] of [...finished].sort(([a], [b]) => (a < b ? -1 : 1))) await bumpBroadcastCounters(tx, broadcastId, { finished: n });
  return next.map((n) => n.after);
}

/**
 * Adds to a broadcast's finished/canceled message counts (its counters row is created with the
 * broadcast, broadcasts accept). A conditional-free UPDATE: the row lock serializes the adders.
 */
export async function bumpBroadcastCounters(tx: Tx, broadcastId: string, by: { finished?: number; canceled?: number }): Promise<void> {
  await tx`
    UPDATE broadcast_counters SET finished = finished + ${by.finished ?? 0}, canceled = canceled + ${by.canceled ?? 0}
    WHERE broadcast_id = ${broadcastId}`;
}

/** Of these messages, those waiting for the finishing stage (the queue views show them as such). */
export async function unfinishedAmong(db: Db, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db<{ id: string }[]>`SELECT message_id AS id FROM unfinished_messages WHERE message_id = ANY(${ids as string[]}::text[])`;
  return new Set(rows.map((r) => r.id));
}

/**
 * Removes messages as retention does (their jobs are the queue's: queue-tx.ts): the record, the
 * body, the client Message-ID entries and a waiting entry. Their events stay (the events group's).
 */
export async function forgetMessages(tx: Tx, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  const list = ids as string[];
  await tx`DELETE FROM client_message_ids WHERE message_id = ANY(${list}::text[])`;
  await tx`DELETE FROM unfinished_messages WHERE message_id = ANY(${list}::text[])`;
  await tx`DELETE FROM message_bodies WHERE message_id = ANY(${list}::text[])`;
  await tx`DELETE FROM messages WHERE id = ANY(${list}::text[])`;
}
