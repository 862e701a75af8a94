/**
 * The delivery queue as the dispatcher sees it: domain verbs over the store (ZoneMTA's queue
 * has push/shift/deferDelivery/releaseDelivery; ours: lease, record, release, recover). Keeps
 * delivery/ away from store/ (DESIGN: delivery may import queue, not store).
 */
import type { DeliveryJob, MessageRecord } from '../domain/types.js';
import type { StorePort } from '../store/port/index.js';
import type { LeasedJob, LeaseOptions, LeaseResult, RecordedOutcome, RecordOutcomeInput } from '../store/port/queue.js';

export type { DueKey, LeasedJob, LeaseOptions, LeaseResult, RecordedOutcome, RecordOutcomeInput } from '../store/port/queue.js';

/** The dispatcher's lease scan: LeaseOptions less the owner, which is the queue's. */
export type LeaseRequest = Omit<LeaseOptions, 'owner'>;

/** What an attempt sends: the message record and its signed body. */
export interface LoadedMessage {
  message: MessageRecord;
  body: Buffer;
}

interface PendingOutcome {
  input: RecordOutcomeInput;
  resolve: (r: RecordedOutcome) => void;
  reject: (err: unknown) => void;
}

export class DeliveryQueue {
  /** Outcomes waiting for the next group commit (record()). */
  private pending: PendingOutcome[] = [];
  private committing = false;
  private secret: Promise<Buffer> | undefined;

  /**
   * `owner`: this node's id, the owner of every lease it takes (store/port/queue.ts, fencing).
   * It stays the same across restarts of the node, so its start takes its own leases back.
   * `formerOwners`: ids this node's leases carried under earlier builds, taken back at start as
   * its own (an LMDB data folder's leases said 'local' before it had a node id file).
   */
  constructor(
    private readonly store: StorePort,
    private readonly owner: string,
    private readonly formerOwners: readonly string[] = [],
  ) {}

  lease(o: LeaseRequest): Promise<LeaseResult> {
    return this.store.queue.lease({ ...o, owner: this.owner });
  }

  /**
   * Records an attempt's outcome; resolves once it is committed and synced, never before.
   * Group commit: outcomes that finish while a commit is being written (or in the same turn of
   * the event loop) go together into the next transaction, one write and one sync for many
   * attempts instead of one each. A crash loses or repeats exactly what it did with one
   * transaction per outcome: an unacknowledged outcome's lease is still in the store, so its
   * job is recovered and tried again (at-least-once), and an acknowledged one is durable.
   */
  record(input: RecordOutcomeInput): Promise<RecordedOutcome> {
    return new Promise((resolve, reject) => {
      this.pending.push({ input, resolve, reject });
      if (this.committing) return;
      this.committing = true;
      setImmediate(() => void this.commitPending());
    });
  }

  /** Writes every pending outcome, batch after batch, until none is left. */
  private async commitPending(): Promise<void> {
    while (this.pending.length > 0) {
      const batch = this.pending;
      this.pending = [];
      try {
        const recorded = await this.store.queue.recordOutcomes(batch.map((p) => p.input));
        batch.forEach((p, i) => p.resolve(recorded[i]));
      } catch (err) {
        if (batch.length === 1) batch[0].reject(err);
        // Written one by one, each outcome gets its own result or error, as without batching.
        else await Promise.all(batch.map((p) => this.store.queue.recordOutcomes([p.input]).then(([r]) => p.resolve(r), p.reject)));
      }
    }
    this.committing = false;
  }

  /**
   * How late the queue is at nowMs: the due time of the job waiting longest (queued jobs list in
   * due order) and how many are due. The dispatcher says it at start: a daemon that was down
   * when messages fell due (scheduled sends at 09:00, retries) sends them late (issue 34).
   */
  async overdue(nowMs: number): Promise<{ oldestDueAt: string; lateMs: number; dueNow: number } | undefined> {
    const [counts, first] = await Promise.all([this.store.queue.counts(nowMs), this.store.queue.list({ state: 'queued', limit: 1 })]);
    const job = first[0];
    if (!job || counts.dueNow === 0) return undefined;
    return { oldestDueAt: job.dueAt, lateMs: Math.max(0, nowMs - Date.parse(job.dueAt)), dueNow: counts.dueNow };
  }

  /** Back to due at dueAtMs without counting an attempt. */
  release(job: LeasedJob, dueAtMs: number): Promise<boolean> {
    return this.store.queue.release(job, dueAtMs);
  }

  /**
   * Whether the job's channel is deleted: read at the moment an attempt would start, so that
   * nothing starts once DELETE /channels/{id} has answered (its tombstone is committed first).
   */
  channelDeleted(job: DeliveryJob): boolean {
    return this.store.queue.channelDeleted(job.channelId);
  }

  /**
   * channelDeleted, read once per channel for one synchronous pass over many jobs (the jobs a
   * round leased, the jobs leased ahead): the ready jobs are looked at after every attempt, and
   * reading (and decoding) the channel record for each of them cost more of the main thread than
   * the attempt's own SMTP commands (bench --profile, issue 36). Within one pass nothing else
   * runs, so the answer is the one each job would have had a moment earlier.
   */
  channelsDeletedOnce(): (job: DeliveryJob) => boolean {
    const seen = new Map<string, boolean>();
    return (job) => {
      let deleted = seen.get(job.channelId);
      if (deleted === undefined) seen.set(job.channelId, (deleted = this.channelDeleted(job)));
      return deleted;
    };
  }

  /** Leased jobs of a deleted channel end without an attempt: removed, as its purge removes them. */
  discard(jobs: readonly LeasedJob[]): Promise<number> {
    return this.store.queue.discard(jobs);
  }

  /**
   * At the node's start (`atStart`): every lease that expired, and every lease of this node's
   * previous run (under its id or a former one, or of no known owner), goes back to due;
   * another node's live lease stays. Otherwise: expired leases only, except those `keep` says
   * the caller still holds.
   */
  async recover(nowMs: number, opts: { atStart?: boolean; keep?: (jobId: string) => boolean } = {}): Promise<number> {
    if (!opts.atStart) return this.store.queue.recover({ nowMs, keep: opts.keep });
    let recovered = 0;
    for (const owner of [this.owner, ...this.formerOwners.filter((o) => o !== this.owner)]) {
      recovered += await this.store.queue.recover({ nowMs, owner, keep: opts.keep });
    }
    return recovered;
  }

  /**
   * Every lease of this node that `keep` says it does not hold goes back to due, whatever its
   * expiry: after a store call whose outcome is unknown (a lease that committed while the
   * connection broke, a leased job that could not be loaded), such a lease is nobody's in this
   * process, and would otherwise wait out its 30 minutes on a node that is alive.
   */
  recoverOwn(nowMs: number, keep: (jobId: string) => boolean): Promise<number> {
    return this.store.queue.recover({ nowMs, owner: this.owner, keep });
  }

  /** Every lease of `owner`, a node that is gone, goes back to due (whatever its expiry), except those `keep` says this node holds. */
  recoverNode(nowMs: number, owner: string, keep: (jobId: string) => boolean): Promise<number> {
    return this.store.queue.recover({ nowMs, owner, keep });
  }

  nextDueAfter(nowMs: number): Promise<number | undefined> {
    return this.store.queue.nextDueAfter(nowMs);
  }

  /** The message record and its signed body, or undefined when either is gone. */
  async load(job: DeliveryJob): Promise<LoadedMessage | undefined> {
    return this.store.messages.withBody(job.messageId);
  }

  /**
   * The key of the per-recipient bounce addresses (delivery/return-path.ts): the tracking secret,
   * created on first use (a store that never ran the daemon has none yet), then kept; a failed
   * creation (full disk) is tried again by the next attempt.
   */
  verpSecret(): Promise<Buffer> {
    this.secret ??= this.store.meta.ensureTrackingSecret().catch((err: unknown) => {
      this.secret = undefined;
      throw err;
    });
    return this.secret;
  }
}
