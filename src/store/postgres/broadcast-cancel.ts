/**
 * BroadcastsPort.cancel in one transaction (store/lmdb/broadcasts.ts cancelBroadcast): entries
 * not yet expanded are deleted; each message whose jobs are all queued without an attempt leaves
 * the queue (its jobs end as done with canceledAt, no event, no suppression) and counts as
 * canceled. A leased job is being delivered right now and finishes normally; so does a job
 * already attempted.
 *
 * Atomic across nodes: the broadcast's row is locked first (racing cancels run one after the
 * other: the second reads canceledAt and answers the first's record; a racing batch either
 * committed before, and its messages are canceled here, or reads canceledAt and rolls back).
 * Each message's jobs are locked (queue-tx.ts lockJobsOfMessage) before they are judged, so a
 * lease on another node either came first (the job is leased: left alone) or waits and then
 * finds the job done.
 */
import { broadcastCompleted, type CancelResult } from '../port/broadcasts.js';
import type { Tx } from './client.js';
import type { PgContext } from './context.js';
import { lockBroadcast, putBroadcast } from './broadcast-rows.js';
import { bumpBroadcastCounters, closeMessageJobs } from './messages-tx.js';
import { finishQueuedJobs, lockJobsOfMessage } from './queue-tx.js';

export async function cancelBroadcast(ctx: PgContext, id: string, now: Date): Promise<CancelResult> {
  return ctx.begin(async (tx): Promise<CancelResult> => {
    const b = await lockBroadcast(tx, id);
    if (!b) return { status: 'not_found' };
    if (b.canceledAt) return { status: 'canceled', record: b };
    const [c] = await tx<{ finished: number }[]>`SELECT finished FROM broadcast_counters WHERE broadcast_id = ${id}`;
    if (broadcastCompleted(b, { finished: c?.finished ?? 0 })) return { status: 'completed' };
    await tx`DELETE FROM broadcast_entries WHERE broadcast_id = ${id} AND idx >= ${b.cursor}`;
    const canceled = await cancelMessages(tx, id, now);
    if (canceled > 0) await bumpBroadcastCounters(tx, id, { canceled });
    const record = { ...b, state: 'done' as const, canceledAt: now.toISOString(), canceledEntries: b.total - b.cursor };
    await putBroadcast(tx, record);
    return { status: 'canceled', record };
  });
}

/** Takes out of the queue each of the broadcast's queued messages none of whose jobs was attempted or leased; returns how many. */
async function cancelMessages(tx: Tx, broadcastId: string, now: Date): Promise<number> {
  const queued = await tx<{ id: string }[]>`
    SELECT id FROM messages WHERE broadcast_id = ${broadcastId} AND status = 'queued' AND open_jobs > 0 ORDER BY id`;
  const closes: { messageId: string; jobs: number }[] = [];
  for (const { id } of queued) {
    const jobs = await lockJobsOfMessage(tx, id);
    if (jobs.length === 0 || jobs.some((j) => j.state !== 'queued' || j.attempts > 0)) continue;
    const ended = await finishQueuedJobs(tx, jobs.map((j) => j.id), { canceledAt: now.toISOString() });
    closes.push({ messageId: id, jobs: ended.length });
  }
  await closeMessageJobs(tx, closes);
  return closes.length;
}
