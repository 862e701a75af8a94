/**
 * Scheduled sends' store verbs on PostgreSQL (store/port/schedule.ts; LMDB: lmdb/message-schedule.ts).
 * Each is one transaction. The message's jobs are locked first (queue-tx.ts lockJobsOfMessage,
 * FOR UPDATE), then its record, the order outcome recording and a broadcast's cancel use, so
 * the verbs never deadlock with them. A lease on any node either committed first (the job is
 * leased or attempted: 409) or waits on the row lock and then finds the job done or moved.
 */
import { eventBase } from '../../domain/submission-events.js';
import type { DeliveryJob, MessageRecord } from '../../domain/types.js';
import type { ScheduleChange } from '../port/schedule.js';
import type { Tx } from './client.js';
import type { PgContext } from './context.js';
import { appendEvents } from './event-log.js';
import { bumpBroadcastCounters, closeMessageJobs } from './messages-tx.js';
import { finishQueuedJobs, lockJobsOfMessage } from './queue-tx.js';
import { iso, jsonb } from './queue-rows.js';

type Judged = { message: MessageRecord; jobs: DeliveryJob[] } | Exclude<ScheduleChange, { status: 'done' }>;

async function untouched(tx: Tx, id: string): Promise<Judged> {
  const jobs = await lockJobsOfMessage(tx, id);
  const [row] = await tx<{ doc: MessageRecord }[]>`SELECT doc FROM messages WHERE id = ${id} FOR UPDATE`;
  if (!row) return { status: 'not_found' };
  const message = row.doc;
  if (message.status === 'sent' || message.openJobs === 0 || message.canceledAt) return { status: 'conflict', reason: 'ended' };
  if (jobs.length === 0 || jobs.some((j) => j.state !== 'queued' || j.attempts > 0)) return { status: 'conflict', reason: 'attempted' };
  return { message, jobs };
}

export function cancelMessage(ctx: PgContext, id: string, now: Date): Promise<ScheduleChange> {
  return ctx.begin(async (tx): Promise<ScheduleChange> => {
    const judged = await untouched(tx, id);
    if (!('jobs' in judged)) return judged;
    const canceledAt = now.toISOString();
    const ended = await finishQueuedJobs(tx, judged.jobs.map((j) => j.id), { canceledAt });
    const [closed] = await closeMessageJobs(tx, [{ messageId: id, jobs: ended.length, at: canceledAt }]);
    const record: MessageRecord = { ...closed, canceledAt };
    await tx`UPDATE messages SET doc = doc || ${jsonb(tx, { canceledAt })} WHERE id = ${id}`;
    if (record.broadcastId) await bumpBroadcastCounters(tx, record.broadcastId, { canceled: 1 });
    await appendEvents(tx, [{ ...eventBase(record), eventType: 'canceled', timestamp: canceledAt, recipients: ended.flatMap((j) => j.recipients), details: {} }]);
    return { status: 'done', record };
  });
}

export function rescheduleMessage(ctx: PgContext, q: { id: string; scheduledAt: string; nowMs: number }): Promise<ScheduleChange> {
  return ctx.begin(async (tx): Promise<ScheduleChange> => {
    const judged = await untouched(tx, q.id);
    if (!('jobs' in judged)) return judged;
    const { message } = judged;
    if (message.scheduledAt === undefined || Date.parse(message.scheduledAt) <= q.nowMs) return { status: 'conflict', reason: 'not_scheduled' };
    const dueMs = Math.max(q.nowMs, Date.parse(q.scheduledAt));
    const scheduledAt = new Date(Date.parse(q.scheduledAt)).toISOString();
    // Held jobs (not yet signed) keep their state: makeMessagesDue makes them due at this due_at.
    await tx`
      UPDATE jobs SET due_at = ${dueMs}, doc = doc || ${jsonb(tx, { dueAt: iso(dueMs) })}
      WHERE message_id = ${q.id} AND state IN ('queued', 'held')`;
    await tx`UPDATE messages SET doc = doc || ${jsonb(tx, { scheduledAt })} WHERE id = ${q.id}`;
    return { status: 'done', record: { ...message, scheduledAt } };
  });
}
