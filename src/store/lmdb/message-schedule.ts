/**
 * Scheduled sends' store verbs on LMDB (store/port/schedule.ts): cancel and reschedule, each one
 * write. The dispatcher leases in its own write transaction (queue.ts leaseDueJobs), and LMDB
 * runs one write at a time, so a job is either leased before this runs (then it is `leased` or
 * attempted here: 409) or no longer due after it: never both an attempt and a cancel.
 */
import { eventBase } from '../../domain/submission-events.js';
import type { DeliveryJob, MessageRecord } from '../../domain/types.js';
import type { ScheduleChange } from '../port/schedule.js';
import { bumpBroadcastInTxn } from './broadcast-stats.js';
import { dbsOf } from './databases.js';
import type { Store } from './env.js';
import { appendEventInTxn } from './events.js';
import { jobsOfMessage } from './message-jobs.js';
import { closeJobOfMessageInTxn } from './queue-outcome.js';
import { dueMs, putDueInTxn } from './queue.js';

type Judged = { message: MessageRecord; jobs: DeliveryJob[] } | Exclude<ScheduleChange, { status: 'done' }>;

/** Inside a write: the message and its jobs when none was leased or attempted, else why not. */
function untouchedInTxn(store: Store, id: string): Judged {
  const message = dbsOf(store).messages.get(id) as MessageRecord | undefined;
  if (!message) return { status: 'not_found' };
  if (message.status === 'sent' || message.openJobs === 0 || message.canceledAt) return { status: 'conflict', reason: 'ended' };
  const jobs = jobsOfMessage(store, id);
  if (jobs.length === 0 || jobs.some((j) => j.state !== 'queued' || j.attempts > 0)) return { status: 'conflict', reason: 'attempted' };
  return { message, jobs };
}

export async function cancelMessage(store: Store, id: string, now: Date): Promise<ScheduleChange> {
  return store.write((): ScheduleChange => {
    const r = cancelUntouchedInTxn(store, id, now);
    if (r.status === 'done' && r.record.broadcastId) bumpBroadcastInTxn(store, r.record.broadcastId, { canceled: 1 });
    return r;
  });
}

/**
 * Inside a write: cancels a message none of whose jobs was leased or attempted (its jobs end
 * done with canceledAt, the record gets canceledAt and leaves the queue, one `canceled` event
 * for its recipients). The message's and a broadcast's cancel share it; the caller counts the
 * broadcast's canceled messages.
 */
export function cancelUntouchedInTxn(store: Store, id: string, now: Date): ScheduleChange {
  const judged = untouchedInTxn(store, id);
  if (!('jobs' in judged)) return judged;
  const { jobs } = judged;
  const canceledAt = now.toISOString();
  const dbs = dbsOf(store);
  for (const job of jobs) {
    // A held job (its message not yet signed) has no due entry: the removal is then a no-op.
    dbs.jobsDue.remove([dueMs(job), job.id]);
    dbs.jobs.put(job.id, { ...job, state: 'done', canceledAt } satisfies DeliveryJob);
    closeJobOfMessageInTxn(store, dbs.messages.get(id) as MessageRecord, canceledAt);
  }
  const closed = dbs.messages.get(id) as MessageRecord;
  const record: MessageRecord = { ...closed, canceledAt };
  dbs.messages.put(id, record);
  appendEventInTxn(store, { ...eventBase(record), eventType: 'canceled', timestamp: canceledAt, recipients: jobs.flatMap((j) => j.recipients), details: {} });
  return { status: 'done', record };
}

export async function rescheduleMessage(store: Store, q: { id: string; scheduledAt: string; nowMs: number }): Promise<ScheduleChange> {
  return store.write((): ScheduleChange => {
    const judged = untouchedInTxn(store, q.id);
    if (!('jobs' in judged)) return judged;
    const { message, jobs } = judged;
    if (message.scheduledAt === undefined || Date.parse(message.scheduledAt) <= q.nowMs) return { status: 'conflict', reason: 'not_scheduled' };
    const dbs = dbsOf(store);
    const dueAt = new Date(Math.max(q.nowMs, Date.parse(q.scheduledAt))).toISOString();
    for (const job of jobs) {
      // Only a job in the due index moves there; a held one (not yet signed) is put in by the finishing stage at its dueAt.
      const wasDue = dbs.jobsDue.doesExist([dueMs(job), job.id]);
      dbs.jobsDue.remove([dueMs(job), job.id]);
      const moved: DeliveryJob = { ...job, dueAt };
      dbs.jobs.put(job.id, moved);
      if (wasDue) putDueInTxn(store, moved);
    }
    const record: MessageRecord = { ...message, scheduledAt: new Date(Date.parse(q.scheduledAt)).toISOString() };
    dbs.messages.put(q.id, record);
    return { status: 'done', record };
  });
}
