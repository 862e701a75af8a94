/**
 * The PostgreSQL engine's QueuePort (store/port/queue.ts): the delivery queue over the tables of
 * schema/queue.ts. Leasing: lease-scan.ts; the verbs that end a lease without an attempt:
 * lease-fence.ts; outcomes: outcome-record.ts; the operator: queue-operator.ts and
 * account-queue-*.ts; reads: queue-read.ts. What other groups do to jobs inside their own
 * transactions: queue-tx.ts.
 */
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
import { dropMessageJobs, retryMessageJobs } from '../account-queue-jobs.js';
import { walkAccountQueue } from '../account-queue-walk.js';
import type { PgContext } from '../context.js';
import { discardLeases, recoverLeases, releaseLease } from '../lease-fence.js';
import { leaseJobs } from '../lease-scan.js';
import { recordOutcomes } from '../outcome-record.js';
import { dropJob, retryJob } from '../queue-operator.js';
import { getJob, listJobs, nextDueAfter, queueCounts } from '../queue-read.js';
import { jobsOfMessageIn } from '../queue-tx.js';

class PgQueue implements QueuePort {
  constructor(private readonly ctx: PgContext) {}

  lease(o: LeaseOptions): Promise<LeaseResult> {
    return leaseJobs(this.ctx, o);
  }

  recordOutcomes(inputs: readonly RecordOutcomeInput[]): Promise<RecordedOutcome[]> {
    return recordOutcomes(this.ctx, inputs);
  }

  release(job: LeasedJob, dueAtMs: number): Promise<boolean> {
    return releaseLease(this.ctx, job, dueAtMs);
  }

  discard(jobs: readonly LeasedJob[]): Promise<number> {
    return discardLeases(this.ctx, jobs);
  }

  recover(o: { nowMs: number; owner?: string; keep?: (jobId: string) => boolean }): Promise<number> {
    return recoverLeases(this.ctx, o);
  }

  nextDueAfter(nowMs: number): Promise<number | undefined> {
    return nextDueAfter(this.ctx.sql, nowMs);
  }

  /**
   * The engine-kept set of deleted channels (context.ts): the deletions that resolved on this
   * node and those other nodes announced. The lease scan also reads channel_purges, so a job of
   * a channel deleted on another node is never leased even before the announcement arrives.
   */
  channelDeleted(channelId: string): boolean {
    return this.ctx.deletedChannels.has(channelId);
  }

  counts(nowMs: number): Promise<QueueCounts> {
    return queueCounts(this.ctx.sql, nowMs);
  }

  list(o: { state?: JobListState; limit?: number; offset?: number } = {}): Promise<DeliveryJob[]> {
    return listJobs(this.ctx.sql, o);
  }

  get(jobId: string): Promise<DeliveryJob | undefined> {
    return getJob(this.ctx.sql, jobId);
  }

  jobsOfMessage(messageId: string): Promise<DeliveryJob[]> {
    return jobsOfMessageIn(this.ctx.sql, messageId);
  }

  retry(jobId: string, nowMs: number): Promise<OperatorOutcome> {
    return retryJob(this.ctx, jobId, nowMs);
  }

  drop(jobId: string, now: Date): Promise<OperatorOutcome> {
    return dropJob(this.ctx, jobId, now);
  }

  walkAccount(w: QueueWalk): Promise<QueueWalkResult> {
    return walkAccountQueue(this.ctx.sql, w);
  }

  retryMessage(o: { messageId: string; domain?: string; nowMs: number }): Promise<MessageJobsOutcome> {
    return retryMessageJobs(this.ctx, o);
  }

  dropMessage(o: { messageId: string; domain?: string; now: Date }): Promise<MessageJobsOutcome> {
    return dropMessageJobs(this.ctx, o);
  }
}

export function pgQueue(ctx: PgContext): QueuePort {
  return new PgQueue(ctx);
}
