/**
 * Cancel and reschedule a message (issue 34): POST /activity/messages/{id}/cancel and PATCH
 * /activity/messages/{id} {scheduledAt}. The message must be visible to the key (another
 * account's or channel's is 403, an unknown one 404: queries.ts visibleMessage); the store verb
 * judges and changes it in one transaction (store/port/schedule.ts), so a cancel and the
 * dispatcher's lease never both win. Once an attempt started, or the message ended, it is 409.
 */
import { AppError, FieldErrorList } from '../domain/errors.js';
import { checkScheduledAt, shownStatus } from '../domain/schedule.js';
import type { MessageRecord, Principal } from '../domain/types.js';
import type { MessageScheduleAnswer } from '../domain/wire.js';
import type { StorePort } from '../store/port/index.js';
import type { ScheduleChange, ScheduleConflict } from '../store/port/schedule.js';
import { visibleMessage } from './queries.js';

export interface MessageScheduleOptions {
  store: StorePort;
  /** limits.maxScheduleDays: the same bound as a send's scheduledAt. */
  maxScheduleDays: number;
  /** Wakes the dispatcher: a message moved earlier is due before the time it sleeps until. */
  onDue: () => void;
  now?: () => number;
}

const CONFLICTS: Record<ScheduleConflict, string> = {
  ended: 'has already left the queue (sent, bounced or canceled)',
  attempted: 'is being delivered or was attempted already',
  not_scheduled: 'is not scheduled, or its time has come',
};

export class MessageSchedule {
  constructor(private readonly o: MessageScheduleOptions) {}

  private nowMs(): number {
    return this.o.now?.() ?? Date.now();
  }

  async cancel(p: Principal, id: string): Promise<MessageScheduleAnswer> {
    const m = await visibleMessage(this.o.store, p, id);
    return this.answer(m.id, await this.o.store.messages.cancelMessage(m.id, new Date(this.nowMs())));
  }

  async reschedule(p: Principal, id: string, body: { scheduledAt: string }): Promise<MessageScheduleAnswer> {
    const m = await visibleMessage(this.o.store, p, id);
    const errors = new FieldErrorList();
    const nowMs = this.nowMs();
    const ms = checkScheduledAt(body.scheduledAt, { nowMs, maxDays: this.o.maxScheduleDays, pointer: '/scheduledAt' }, errors);
    errors.throwIfAny();
    const answer = this.answer(m.id, await this.o.store.messages.rescheduleMessage({ id: m.id, scheduledAt: new Date(ms!).toISOString(), nowMs }));
    this.o.onDue();
    return answer;
  }

  private answer(id: string, r: ScheduleChange): MessageScheduleAnswer {
    if (r.status === 'not_found') throw new AppError('not_found', `Message ${id} does not exist`);
    if (r.status === 'conflict') throw new AppError('conflict', `Message ${id} ${CONFLICTS[r.reason]}`);
    return scheduleAnswer(r.record, this.nowMs());
  }
}

function scheduleAnswer(m: MessageRecord, nowMs: number): MessageScheduleAnswer {
  return {
    messageId: m.id,
    status: shownStatus(m, nowMs),
    ...(m.scheduledAt !== undefined && { scheduledAt: m.scheduledAt }),
    ...(m.canceledAt !== undefined && { canceledAt: m.canceledAt }),
  };
}
