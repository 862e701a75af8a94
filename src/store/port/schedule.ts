/**
 * The store verbs of scheduled sends (issue 34): cancel a message that no attempt has touched,
 * move a scheduled message to another time. Each is one transaction in each engine, atomic
 * against the dispatcher's lease: a job leased (an attempt started) before the verb runs makes it
 * answer `attempted`; a lease after it finds no due job.
 */
import type { MessageRecord } from '../../domain/types.js';

/**
 * `ended`: the message already left the queue (sent, canceled, every recipient bounced);
 * `attempted`: a job of it is leased or was attempted; `not_scheduled` (reschedule only): it has
 * no scheduled time, or its time has come.
 */
export type ScheduleConflict = 'ended' | 'attempted' | 'not_scheduled';

export type ScheduleChange = { status: 'done'; record: MessageRecord } | { status: 'not_found' } | { status: 'conflict'; reason: ScheduleConflict };

export interface SchedulePort {
  /**
   * Ends a queued message none of whose jobs was leased or attempted: its jobs end (done, with
   * canceledAt, out of the due index), the record gets canceledAt and is `sent` (out of the
   * message queue), and one `canceled` event for its recipients is appended (webhooks get it
   * in the same write). No bounce, no suppression. A broadcast's message counts as canceled.
   */
  cancelMessage(id: string, now: Date): Promise<ScheduleChange>;
  /** Moves a still-scheduled message (scheduledAt after nowMs, no job leased or attempted) to `scheduledAt`: its record and its jobs' due time. */
  rescheduleMessage(q: { id: string; scheduledAt: string; nowMs: number }): Promise<ScheduleChange>;
}
