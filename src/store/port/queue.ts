/**
 * The delivery queue: due jobs, leases (with fencing), attempt outcomes and the operator's retry and drop.
 *
 * Part of the store port (store/port/index.ts): asynchronous verbs that take and return plain
 * data; what must commit together is one verb. Implemented by the LMDB engine in
 * store/lmdb/repos/ and checked by the contract suite in test/store-contract/.
 *
 * A job is queued (due at dueAt), leased (an attempt works on it until leaseUntil) or done.
 * Leases are fenced: each lease names its owner (a node id) and a generation that grows by one
 * with every lease of the job, and every verb that ends a lease (an outcome, a release, a
 * discard) acts only while the job is still leased under that owner and generation. A lease
 * that was recovered (it expired, or its node restarted) and perhaps leased again is no longer
 * the old holder's: its late outcome is refused as `stale` and nothing is written for it, so
 * an attempt is never recorded twice.
 */
import type { AttemptResult } from '../../domain/delivery-result.js';
import type { DeliveryJob, EventRecord } from '../../domain/types.js';

/** [dueAtMs, jobId]: a place in the due order, the lease scan's round-robin cursor. */
export type DueKey = [number, string];

/** A job as a lease returned it: the lease's expiry, owner and generation are its fencing token. */
export interface LeasedJob extends DeliveryJob {
  state: 'leased';
  leaseUntil: string;
  /** The node that holds the lease. */
  leaseOwner: string;
  /** The lease's generation: one more than the job's previous lease. */
  leaseGeneration: number;
}

export interface LeaseOptions {
  /** The node taking the leases (its id stays the same across its restarts). */
  owner: string;
  nowMs: number;
  /** Most jobs to lease. */
  max: number;
  leaseMs: number;
  /**
   * Asked for each due job in due order; false leaves it due (e.g. its domain is busy). A
   * synchronous, pure filter (store/port/index.ts): an engine may ask it more than once.
   */
  accept?: (job: DeliveryJob) => boolean;
  /**
   * Asked first with the job's recipient domain, before the job is read: false skips it. An
   * engine that keeps the domain in its due index skips a busy domain's backlog without reading
   * its jobs (bench/RESULTS.md: 137 job reads per delivered message before this).
   */
  acceptDomain?: (domain: string) => boolean;
  /** Most due entries to look at (bounds the work when many are skipped). Default 20 × max, at least 500. */
  scanLimit?: number;
  /** Continue after this key (the previous call's resumeAfter): round robin past skipped jobs. */
  after?: DueKey;
}

export interface LeaseResult {
  jobs: LeasedJob[];
  /** Due jobs refused by `accept`: they stay due. */
  skipped: number;
  /** Due jobs of deleted channels, removed instead of leased (as the channel's purge removes them). */
  discarded: number;
  /** Set when the scan stopped at scanLimit: pass it as `after` next time. */
  resumeAfter?: DueKey;
}

export interface RecordOutcomeInput {
  /** The job as leased: its lease is the fencing token the outcome is recorded under. */
  job: LeasedJob;
  result: AttemptResult;
  attemptAt: Date;
  /** When the deferred recipients are tried again. Absent: they are given up (expired). */
  nextDueAtMs?: number;
}

export interface RecordedOutcome {
  /** stale: the lease was no longer the caller's (recovered, leased again or dropped meanwhile); nothing was written. */
  status: 'done' | 'requeued' | 'stale';
  attempt: number;
  delivered: string[];
  bounced: string[];
  deferred: string[];
  expired: string[];
  suppressed: string[];
}

export interface QueueCounts {
  queued: number;
  dueNow: number;
  leased: number;
}

export type JobListState = 'open' | 'queued' | 'leased' | 'done';

export type OperatorResult = 'ok' | 'not_found' | 'leased' | 'done';

/** What an operator's retry or drop of one job did, and the job afterwards (undefined for an unknown id). */
export interface OperatorOutcome {
  result: OperatorResult;
  job: DeliveryJob | undefined;
}

/** One message of an account's queue (GET /queue, /queue/messages). */
export interface QueuedMessage {
  /** The accepted event's seq: the cursor. */
  seq: number;
  accepted: EventRecord;
  /** Its jobs not yet done (queued or leased), only those to `domain` when the walk names one. */
  jobs: DeliveryJob[];
  /** Still being composed and signed: its queued jobs are not due until then, whatever their dueAt. */
  preparing: boolean;
}

export interface QueueWalk {
  accountId: string;
  /** A channel key's channel: other channels' messages are skipped. */
  channelId?: string;
  /** Only messages with an open job to this recipient domain (lowercase A-label). */
  domain?: string;
  /** Start strictly after this accepted seq (0: from the oldest). */
  afterSeq: number;
  /** Stop once this many messages match. */
  limit: number;
  /** Stop once this many queued messages of the account were looked at. */
  scanLimit: number;
}

export interface QueueWalkResult {
  messages: QueuedMessage[];
  /** Queue entries looked at. */
  scanned: number;
  /** The seq of the last entry looked at (afterSeq when none): continue strictly after it. */
  lastSeq: number;
  /** True when the walk reached the end of the account's queue. */
  reachedEnd: boolean;
}

/** What a retry or drop of one message's jobs did. */
export interface MessageJobsOutcome {
  /** Jobs of the message (to `domain` when given), in any state. */
  matched: number;
  /** Jobs the verb acted on (queued ones). */
  changed: number;
  /** Jobs being delivered right now, left as they are. */
  leased: number;
  /** The matched jobs afterwards. */
  jobs: DeliveryJob[];
  /** The message still waits for its composition and signature: a retry only moved its jobs' due time. */
  preparing: boolean;
}

export interface QueuePort {
  /**
   * Leases up to `max` due jobs (dueAt <= nowMs) to `owner` for leaseMs, in due order, each with
   * the next generation of its lease. Atomic per job: concurrent callers never get the same job
   * (LMDB: one write; PostgreSQL: SELECT ... FOR UPDATE SKIP LOCKED). Due jobs of deleted
   * channels are removed instead (`discarded`).
   */
  lease(o: LeaseOptions): Promise<LeaseResult>;

  /**
   * Records attempts' outcomes in one commit, each as if alone and in order (all or none): the
   * job's state, attempts and history, its next due time, the delivered and bounced events,
   * suppressions of hard bounces (after the DNS-failure threshold), the message's open-job count.
   * Each is fenced: a job no longer leased under its owner and generation gets `stale` and
   * nothing of it is written.
   */
  recordOutcomes(inputs: readonly RecordOutcomeInput[]): Promise<RecordedOutcome[]>;

  /** Gives a lease back without counting an attempt (shutdown): due at dueAtMs. False when the lease was no longer the caller's. */
  release(job: LeasedJob, dueAtMs: number): Promise<boolean>;

  /**
   * Leased jobs whose channel was deleted since: removed without an attempt (no event, no
   * bounce), as the channel's purge removes them. A job whose lease is no longer the caller's
   * (owner and generation) is left alone. Returns how many were removed.
   */
  discard(jobs: readonly LeasedJob[]): Promise<number>;

  /**
   * Leases that expired at nowMs go back to due now (their holder crashed or hung:
   * at-least-once). With `owner` (the start of that node): that node's own leases, left by its
   * previous run, and leases that name no owner (written before leases had one) go back too,
   * whatever their expiry; another node's live lease never does. `keep` spares leases the
   * caller still holds (a synchronous, pure predicate). Returns how many jobs went back.
   */
  recover(o: { nowMs: number; owner?: string; keep?: (jobId: string) => boolean }): Promise<number>;

  /** The earliest due time strictly after nowMs (the dispatcher's wake-up), or undefined. */
  nextDueAfter(nowMs: number): Promise<number | undefined>;

  /**
   * Whether the channel is deleted, answered synchronously: the port's one synchronous read,
   * an engine-kept view for the dispatcher's last check in the same turn as it writes MAIL
   * FROM. It answers true for every channel whose deletion has resolved on this node (LMDB: one
   * key read; PostgreSQL: a set kept by the deletion verb and a notification from other nodes).
   */
  channelDeleted(channelId: string): boolean;

  /** Queued, due-now and leased jobs at nowMs (index counts: the same cost for ten jobs as for a million). */
  counts(nowMs: number): Promise<QueueCounts>;

  /**
   * A page of jobs for the operator. queued: by due time; leased: by lease expiry; open:
   * leased then queued; done: every finished job.
   */
  list(o?: { state?: JobListState; limit?: number; offset?: number }): Promise<DeliveryJob[]>;

  get(jobId: string): Promise<DeliveryJob | undefined>;

  /** The message's delivery jobs, in any state. */
  jobsOfMessage(messageId: string): Promise<DeliveryJob[]>;

  /**
   * `postrider queue retry`: a queued job becomes due now (attempts and history stay; a job of
   * a message still being signed only gets its due time). One conditional update: a leased or
   * done job answers 'leased' or 'done' and is left as it is. Returns the job afterwards.
   */
  retry(jobId: string, nowMs: number): Promise<OperatorOutcome>;

  /**
   * `postrider queue drop`: a queued job ends as bounced for each recipient (reason "dropped by
   * operator"), with the message's open-job count, in one conditional update as retry's.
   */
  drop(jobId: string, now: Date): Promise<OperatorOutcome>;

  /** An account's queued messages in queue order (oldest accepted first), bounded as the walk says. */
  walkAccount(w: QueueWalk): Promise<QueueWalkResult>;

  /** The message's queued jobs (to `domain` when given) become due now, in one commit; leased ones finish their attempt. */
  retryMessage(o: { messageId: string; domain?: string; nowMs: number }): Promise<MessageJobsOutcome>;

  /**
   * The message's queued jobs (to `domain` when given) end as drop() ends them, all or nothing
   * in one commit: while one of them is leased, nothing is dropped (that attempt may deliver).
   */
  dropMessage(o: { messageId: string; domain?: string; now: Date }): Promise<MessageJobsOutcome>;
}
