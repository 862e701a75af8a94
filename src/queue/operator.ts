/**
 * The operator's queue verbs (`postrider queue`): a page of jobs with the queue's counts, and
 * retrying or dropping one queued job. Each verb returns the job as it is afterwards, so the
 * CLI shows the outcome without reading the store itself.
 */
import type { DeliveryJob } from '../domain/types.js';
import type { StorePort } from '../store/port/index.js';
import type { JobListState, OperatorOutcome, OperatorResult, QueueCounts } from '../store/port/queue.js';

export type { JobListState, OperatorOutcome, OperatorResult, QueueCounts };

export interface QueuePage {
  /**
   * The queue's counts, and `preparing`: messages committed but still being composed and
   * DKIM-signed, whose jobs are in no list yet (they become due once signed).
   */
  counts: QueueCounts & { preparing: number };
  jobs: DeliveryJob[];
}

/** Jobs in `state` (see QueuePort.list for the orders), and the counts at nowMs. */
export async function listQueue(store: StorePort, o: { state: JobListState; limit: number; offset: number }, nowMs: number): Promise<QueuePage> {
  const [jobs, counts, preparing] = await Promise.all([store.queue.list(o), store.queue.counts(nowMs), store.messages.unfinishedCount()]);
  return { counts: { ...counts, preparing }, jobs };
}

/** A queued job becomes due now (its attempts and history stay); a running daemon picks it up within a minute. */
export function retry(store: StorePort, id: string, nowMs: number): Promise<OperatorOutcome> {
  return store.queue.retry(id, nowMs);
}

/** A queued job ends as bounced for each of its recipients (reason "dropped by operator"). */
export function drop(store: StorePort, id: string, now: Date = new Date()): Promise<OperatorOutcome> {
  return store.queue.drop(id, now);
}
