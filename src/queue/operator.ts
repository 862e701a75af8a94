/**
 * The operator's queue verbs (`postrider queue`): a page of jobs with the queue's counts, and
 * retrying or dropping one queued job. Each verb returns the job as it is afterwards, so the
 * CLI shows the outcome without reading the store itself.
 */
import type { DeliveryJob } from '../domain/types.js';
import type { LmdbStore } from '../store/lmdb/engine.js';
import { dropJob } from '../store/lmdb/queue-outcome.js';
import { getJob, listJobs, queueCounts, retryJob, type JobListState, type OperatorResult, type QueueCounts } from '../store/lmdb/queue.js';
import { awaitingSignatureCount } from '../store/lmdb/signing.js';

export type { JobListState, OperatorResult, QueueCounts };

export interface QueuePage {
  /**
   * The queue's counts, and `preparing`: messages committed but still being composed and
   * DKIM-signed, whose jobs are in no list yet (they become due once signed).
   */
  counts: QueueCounts & { preparing: number };
  jobs: DeliveryJob[];
}

export interface OperatorOutcome {
  result: OperatorResult;
  /** The job after the verb; undefined for an unknown id. */
  job: DeliveryJob | undefined;
}

/** Jobs in `state` (see store/queue.ts listJobs for the orders), and the counts at nowMs. */
export function listQueue(store: LmdbStore, o: { state: JobListState; limit: number; offset: number }, nowMs: number): QueuePage {
  const jobs = listJobs(store, o);
  return { counts: { ...queueCounts(store, nowMs), preparing: awaitingSignatureCount(store) }, jobs };
}

/** A queued job becomes due now (its attempts and history stay); a running daemon picks it up within a minute. */
export async function retry(store: LmdbStore, id: string, nowMs: number): Promise<OperatorOutcome> {
  const result = await retryJob(store, id, nowMs);
  return { result, job: getJob(store, id) };
}

/** A queued job ends as bounced for each of its recipients (reason "dropped by operator"). */
export async function drop(store: LmdbStore, id: string): Promise<OperatorOutcome> {
  const result = await dropJob(store, id);
  return { result, job: getJob(store, id) };
}
