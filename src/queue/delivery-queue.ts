/**
 * The delivery queue as the dispatcher sees it: domain verbs over the store (ZoneMTA's queue
 * has push/shift/deferDelivery/releaseDelivery; ours: lease, record, release, recover). Keeps
 * delivery/ away from store/ (DESIGN: delivery may import queue, not store).
 */
import type { DeliveryJob, MessageRecord } from '../domain/types.js';
import type { Store } from '../store/env.js';
import { getBody, getMessage } from '../store/messages.js';
import { leaseDueJobs, nextDueAfter, recoverExpiredLeases, releaseJob, type LeaseOptions, type LeaseResult } from '../store/queue.js';
import { recordOutcome, type RecordOutcomeInput, type RecordedOutcome } from '../store/queue-outcome.js';

export type { DueKey, LeaseOptions, LeaseResult } from '../store/queue.js';
export type { RecordOutcomeInput, RecordedOutcome } from '../store/queue-outcome.js';

export class DeliveryQueue {
  constructor(private readonly store: Store) {}

  lease(o: LeaseOptions): Promise<LeaseResult> {
    return leaseDueJobs(this.store, o);
  }

  record(input: RecordOutcomeInput): Promise<RecordedOutcome> {
    return recordOutcome(this.store, input);
  }

  /** Back to due at dueAtMs without counting an attempt. */
  release(job: DeliveryJob, dueAtMs: number): Promise<boolean> {
    return releaseJob(this.store, job, dueAtMs);
  }

  recover(nowMs: number, opts: { all?: boolean; keep?: (jobId: string) => boolean } = {}): Promise<number> {
    return recoverExpiredLeases(this.store, nowMs, opts);
  }

  nextDueAfter(nowMs: number): number | undefined {
    return nextDueAfter(this.store, nowMs);
  }

  /** The message record and its signed body, or undefined when either is gone. */
  load(job: DeliveryJob): { message: MessageRecord; body: Buffer } | undefined {
    const message = getMessage(this.store, job.messageId);
    const body = getBody(this.store, job.messageId);
    return message && body ? { message, body } : undefined;
  }
}
