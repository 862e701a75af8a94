/**
 * BroadcastsPort.cancel in one transaction (store/lmdb/broadcasts.ts cancelBroadcast): entries
 * not yet expanded are deleted; each message whose jobs are all queued (or held) without an
 * attempt is canceled as a message's cancel does it (message-schedule.ts: its jobs end done with
 * canceledAt, the record gets canceledAt and leaves the queue, one `canceled` event for its
 * recipients, no suppression), a scheduled one too, and counts as canceled. A leased job is being
 * delivered right now and finishes normally; so does a job already attempted.
 *
 * Atomic across nodes: the broadcast's row is locked first (racing cancels run one after the
 * other: the second reads canceledAt and answers the first's record; a racing batch either
 * committed before, and its messages are canceled here, or reads canceledAt and rolls back).
 * The messages' jobs are locked (queue-tx.ts cancelUntouchedJobs) before they are judged, so a
 * lease on another node either came first (the job is leased: left alone) or waits and then
 * finds the job done.
 */
import { eventBase } from '../../domain/submission-events.js';
import { broadcastCompleted, type CancelResult } from '../port/broadcasts.js';
import type { Tx } from './client.js';
import type { PgContext } from './context.js';
import { lockBroadcast, putBroadcast } from './broadcast-rows.js';
import { bumpBroadcastCounters, closeMessageJobs } from './messages-tx.js';
import { appendEvents, type EventDraft } from './event-log.js';
import { cancelUntouchedJobs } from './queue-tx.js';
import { jsonb } from './queue-rows.js';

export async function cancelBroadcast(ctx: PgContext, id: string, now: Date): Promise<CancelResult> {
  return ctx.begin(async (tx): Promise<CancelResult> => {
    const b = await lockBroadcast(tx, id);
    if (!b) return { status: 'not_found' };
    if (b.canceledAt) return { status: 'canceled', record: b };
    const [c] = await tx<{ finished: number }[]>`SELECT finished FROM broadcast_counters WHERE broadcast_id = ${id}`;
    if (broadcastCompleted(b, { finished: c?.finished ?? 0 })) return { status: 'completed' };
    await tx`DELETE FROM broadcast_entries WHERE broadcast_id = ${id} AND idx >= ${b.cursor}`;
    const events = await cancelMessages(tx, id, now);
    if (events.length > 0) await bumpBroadcastCounters(tx, id, { canceled: events.length });
    const record = { ...b, state: 'done' as const, canceledAt: now.toISOString(), canceledEntries: b.total - b.cursor };
    await putBroadcast(tx, record);
    // Last: from the first append to the COMMIT every other appender waits (event-log.ts).
    for (let i = 0; i < events.length; i += CANCEL_CHUNK) await appendEvents(tx, events.slice(i, i + CANCEL_CHUNK));
    return { status: 'canceled', record };
  });
}

/** Messages judged per statement: a broadcast of 100,000 messages is cancelled in 100 rounds, not 100,000. */
const CANCEL_CHUNK = 1_000;

/**
 * Cancels each of the broadcast's queued messages none of whose jobs was attempted or leased;
 * returns their canceled events, to append once the transaction's other writes are done.
 */
async function cancelMessages(tx: Tx, broadcastId: string, now: Date): Promise<EventDraft[]> {
  const queued = await tx<{ id: string }[]>`
    SELECT id FROM messages WHERE broadcast_id = ${broadcastId} AND status = 'queued' AND open_jobs > 0 ORDER BY id`;
  const canceledAt = now.toISOString();
  const events: EventDraft[] = [];
  for (let i = 0; i < queued.length; i += CANCEL_CHUNK) {
    const ended = await cancelUntouchedJobs(tx, queued.slice(i, i + CANCEL_CHUNK).map((r) => r.id), canceledAt);
    const closed = await closeMessageJobs(tx, [...ended].map(([messageId, jobs]) => ({ messageId, jobs: jobs.length, at: canceledAt })));
    if (closed.length === 0) continue;
    await tx`UPDATE messages SET doc = doc || ${jsonb(tx, { canceledAt })} WHERE id = ANY(${closed.map((m) => m.id)}::text[])`;
    for (const m of closed) {
      events.push({ ...eventBase(m), eventType: 'canceled', timestamp: canceledAt, recipients: ended.get(m.id)!.flatMap((j) => j.recipients), details: {} });
    }
  }
  return events;
}
