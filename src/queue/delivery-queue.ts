/**
 * The delivery queue as the dispatcher sees it: domain verbs over the store (ZoneMTA's queue
 * has push/shift/deferDelivery/releaseDelivery; ours: lease, record, release, recover). Keeps
 * delivery/ away from store/ (DESIGN: delivery may import queue, not store).
 */
import type { DeliveryJob, MessageRecord } from '../domain/types.js';
import type { LmdbStore } from '../store/lmdb/engine.js';
import { isChannelDeleted } from '../store/lmdb/channel-records.js';
import { getBody, getMessage } from '../store/lmdb/messages.js';
import { discardLeasedJobs, leaseDueJobs, nextDueAfter, recoverExpiredLeases, releaseJob, type LeaseOptions, type LeaseResult } from '../store/lmdb/queue.js';
import { recordOutcome, recordOutcomes, type RecordOutcomeInput, type RecordedOutcome } from '../store/lmdb/queue-outcome.js';
import { ensureTrackingSecret, trackingSecret } from '../store/lmdb/secrets.js';

export type { DueKey, LeaseOptions, LeaseResult } from '../store/lmdb/queue.js';
export type { RecordOutcomeInput, RecordedOutcome } from '../store/lmdb/queue-outcome.js';

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

  constructor(private readonly store: LmdbStore) {}

  lease(o: LeaseOptions): Promise<LeaseResult> {
    return leaseDueJobs(this.store, o);
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
        const recorded = await recordOutcomes(this.store, batch.map((p) => p.input));
        batch.forEach((p, i) => p.resolve(recorded[i]));
      } catch (err) {
        if (batch.length === 1) batch[0].reject(err);
        // Written one by one, each outcome gets its own result or error, as without batching.
        else await Promise.all(batch.map((p) => recordOutcome(this.store, p.input).then(p.resolve, p.reject)));
      }
    }
    this.committing = false;
  }

  /** Back to due at dueAtMs without counting an attempt. */
  release(job: DeliveryJob, dueAtMs: number): Promise<boolean> {
    return releaseJob(this.store, job, dueAtMs);
  }

  /**
   * Whether the job's channel is deleted: read at the moment an attempt would start, so that
   * nothing starts once DELETE /channels/{id} has answered (its tombstone is committed first).
   */
  channelDeleted(job: DeliveryJob): boolean {
    return isChannelDeleted(this.store, job.channelId);
  }

  /** Leased jobs of a deleted channel end without an attempt: removed, as its purge removes them. */
  discard(jobs: readonly DeliveryJob[]): Promise<number> {
    return discardLeasedJobs(this.store, jobs);
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

  /**
   * The key of the per-recipient bounce addresses (delivery/return-path.ts): the tracking secret,
   * created on first use (a store that never ran the daemon has none yet), then kept; a failed
   * creation (full disk) is tried again by the next attempt.
   */
  verpSecret(): Promise<Buffer> {
    this.secret ??= ensureTrackingSecret(this.store).then(
      () => trackingSecret(this.store),
      (err: unknown) => {
        this.secret = undefined;
        throw err;
      },
    );
    return this.secret;
  }
}
