/** The LMDB engine's LmdbQueue: the port's verbs over the functions of store/lmdb/. */
import type { DeliveryJob } from '../../../domain/types.js';
import type {
  JobListState,
  LeasedJob,
  LeaseOptions,
  LeaseResult,
  MessageJobsOutcome,
  OperatorOutcome,
  QueueCounts,
  QueuePort,
  QueueWalk,
  QueueWalkResult,
  RecordedOutcome,
  RecordOutcomeInput,
} from '../../port/queue.js';
import { dropMessageJobs, retryMessageJobs, walkQueuedMessages } from '../account-queue.js';
import { isChannelDeleted } from '../channel-records.js';
import type { Store } from '../env.js';
import { jobsOfMessage } from '../message-jobs.js';
import {
  discardLeasedJobs,
  getJob,
  leaseDueJobs,
  listJobs,
  nextDueAfter,
  publicJob,
  queueCounts,
  recoverExpiredLeases,
  releaseJob,
  retryJob,
} from '../queue.js';
import { dropJob, recordOutcomes } from '../queue-outcome.js';

export class LmdbQueue implements QueuePort {
  constructor(private readonly store: Store) {}

  lease(o: LeaseOptions): Promise<LeaseResult> {
    return leaseDueJobs(this.store, o);
  }

  recordOutcomes(inputs: readonly RecordOutcomeInput[]): Promise<RecordedOutcome[]> {
    return recordOutcomes(this.store, inputs);
  }

  release(job: LeasedJob, dueAtMs: number): Promise<boolean> {
    return releaseJob(this.store, job, dueAtMs);
  }

  discard(jobs: readonly LeasedJob[]): Promise<number> {
    return discardLeasedJobs(this.store, jobs);
  }

  recover(o: { nowMs: number; owner?: string; keep?: (jobId: string) => boolean }): Promise<number> {
    return recoverExpiredLeases(this.store, o);
  }

  async nextDueAfter(nowMs: number): Promise<number | undefined> {
    return nextDueAfter(this.store, nowMs);
  }

  /** One key read: LMDB sees every committed deletion at once, in the caller's turn. */
  channelDeleted(channelId: string): boolean {
    return isChannelDeleted(this.store, channelId);
  }

  async counts(nowMs: number): Promise<QueueCounts> {
    return queueCounts(this.store, nowMs);
  }

  async list(o: { state?: JobListState; limit?: number; offset?: number } = {}): Promise<DeliveryJob[]> {
    return listJobs(this.store, o).map(publicJob);
  }

  async get(jobId: string): Promise<DeliveryJob | undefined> {
    const job = getJob(this.store, jobId);
    return job && publicJob(job);
  }

  async jobsOfMessage(messageId: string): Promise<DeliveryJob[]> {
    return jobsOfMessage(this.store, messageId).map(publicJob);
  }

  async retry(jobId: string, nowMs: number): Promise<OperatorOutcome> {
    const result = await retryJob(this.store, jobId, nowMs);
    return { result, job: await this.get(jobId) };
  }

  async drop(jobId: string, now: Date): Promise<OperatorOutcome> {
    const result = await dropJob(this.store, jobId, now);
    return { result, job: await this.get(jobId) };
  }

  async walkAccount(w: QueueWalk): Promise<QueueWalkResult> {
    return walkQueuedMessages(this.store, w);
  }

  retryMessage(o: { messageId: string; domain?: string; nowMs: number }): Promise<MessageJobsOutcome> {
    return retryMessageJobs(this.store, o);
  }

  dropMessage(o: { messageId: string; domain?: string; now: Date }): Promise<MessageJobsOutcome> {
    return dropMessageJobs(this.store, o);
  }
}
