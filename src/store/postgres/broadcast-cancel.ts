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
 * The messages' jobs are locked (queue-tx.ts cancelUntouchedJobs) before they are judged, so a
 * lease on another node either came first (the job is leased: left alone) or waits and then
 * finds the job done.
 */
import { broadcastCompleted, type CancelResult } from '../port/broadcasts.js';
import type { Tx } from './client.js';
import type { PgContext } from './context.js';
import { lockBroadcast, putBroadcast } from './broadcast-rows.js';
import { bumpBroadcastCounters, closeMessageJobs } from './messages-tx.js';
import { cancelUntouchedJobs } from './queue-tx.js';

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

/** Messages judged per statement: a broadcast of 100,000 messages is cancelled in 100 rounds, not 100,000. */
const CANCEL_CHUNK = 1_000;

/** Takes out of the queue each of the broadcast's queued messages none of whose jobs was attempted or leased; returns how many. */
async function cancelMessages(tx: Tx, broadcastId: string, now: Date): Promise<number> {
  const queued = await tx<{ id: string }[]>`
    SELECT id FROM messages WHERE broadcast_id = ${broadcastId} AND status = 'queued' AND open_jobs > 0 ORDER BY id`;
  let canceled = 0;
  for (let i = 0; i < queued.length; i += CANCEL_CHUNK) {
    const ended = await cancelUntouchedJobs(tx, queued.slice(i, i + CANCEL_CHUNK).map((r) => r.id), now.toISOString());
    await closeMessageJobs(tx, [...ended].map(([messageId, jobs]) => ({ messageId, jobs })));
    canceled += ended.size;
  }
  return canceled;
}
