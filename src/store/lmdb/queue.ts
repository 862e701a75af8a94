/**
 * The delivery queue's store verbs: leasing due jobs, giving leases back, recovering leases
 * whose owner died, and the operator's list/retry. Recording an attempt's outcome is in
 * queue-outcome.ts. Every verb that changes state is one durable transaction.
 *
 * States and indexes (layout.ts): a queued job has one jobsDue entry [dueAtMs, jobId]; a
 * leased job has one jobsLeased entry [leaseUntilMs, jobId]; a done job has neither. The job's
 * dueAt/leaseUntil fields always equal the time in its index key, so the key can be rebuilt
 * from the record and the lease time doubles as the lease token: an outcome is only recorded
 * by the holder of the current lease.
 */
import type { DeliveryJob } from '../../domain/types.js';
import { dbsOf } from './databases.js';
import type { Store } from './env.js';
import { deletedChannels } from './channel-records.js';
import { KEY_MAX } from './layout.js';

export type DueKey = [number, string];

export interface LeaseOptions {
  nowMs: number;
  /** Most jobs to lease. */
  max: number;
  leaseMs: number;
  /** Asked for each due job in due order; false leaves it due (e.g. its domain is busy). */
  accept?: (job: DeliveryJob) => boolean;
  /**
   * Asked first with the recipient domain from the due index, before the job is read: false
   * skips the job without decoding it. A scan past a busy domain's backlog then costs index
   * reads only (bench/RESULTS.md: 137 job reads per delivered message before this).
   */
  acceptDomain?: (domain: string) => boolean;
  /** Most due entries to look at (bounds the work when many are skipped). Default 20 × max, at least 500. */
  scanLimit?: number;
  /** Continue after this key (the previous call's resumeAfter): round robin past skipped jobs. */
  after?: DueKey;
}

export interface LeaseResult {
  jobs: DeliveryJob[];
  /** Due jobs refused by `accept`: they stay due. */
  skipped: number;
  /** Due jobs of deleted channels, removed instead of leased (as the channel's purge removes them). */
  discarded: number;
  /** Set when the scan stopped at scanLimit: pass it as `after` next time. */
  resumeAfter?: DueKey;
}

/** Moves up to `max` due jobs (dueAt <= now) to leased. Reads the due index only up to now. */
export async function leaseDueJobs(store: Store, o: LeaseOptions): Promise<LeaseResult> {
  if (o.max <= 0) return { jobs: [], skipped: 0, discarded: 0 };
  const scanLimit = o.scanLimit ?? Math.max(500, o.max * 20);
  return store.write(() => {
    const { jobs, jobsDue, jobsLeased } = dbsOf(store);
    // Collected first: the loop below changes the index it came from.
    const entries = [...jobsDue.getRange({ start: o.after ?? [0], end: [o.nowMs, KEY_MAX], limit: scanLimit + (o.after ? 1 : 0) })] as Array<{ key: DueKey; value: unknown }>;
    const out: DeliveryJob[] = [];
    const leaseUntilMs = o.nowMs + o.leaseMs;
    const leaseUntil = new Date(leaseUntilMs).toISOString();
    let skipped = 0;
    let discarded = 0;
    let examined = 0;
    const deleted = deletedChannels(store);
    let last: DueKey | undefined;
    for (const { key, value } of entries) {
      if (o.after && key[0] === o.after[0] && key[1] === o.after[1]) continue;
      if (out.length >= o.max || examined >= scanLimit) break;
      examined++;
      last = key;
      // Entries written before the domain was kept in the index hold 1: those read the job.
      if (o.acceptDomain && typeof value === 'string' && !o.acceptDomain(value)) {
        skipped++;
        continue;
      }
      const job = jobs.get(key[1]) as DeliveryJob | undefined;
      if (!job || job.state !== 'queued') {
        jobsDue.remove(key); // an index entry without its job: heal, never deliver twice
        continue;
      }
      // The channel was deleted (its tombstone committed before the DELETE's 204): nothing of it
      // is sent any more; its job goes now rather than when the purge reaches it.
      if (deleted(job.channelId)) {
        removeJobInTxn(store, job);
        discarded++;
        continue;
      }
      if (o.accept && !o.accept(job)) {
        skipped++;
        continue;
      }
      const leased: DeliveryJob = { ...job, state: 'leased', leaseUntil };
      jobsDue.remove(key);
      jobs.put(job.id, leased);
      jobsLeased.put([leaseUntilMs, job.id], 1);
      out.push(leased);
    }
    const truncated = examined >= scanLimit && out.length < o.max;
    return { jobs: out, skipped, discarded, resumeAfter: truncated ? last : undefined };
  });
}

/**
 * Leases that expired (or all of them, at the start of the only dispatcher of this data folder)
 * go back to due now: their owner crashed or hung, so delivery is retried (at-least-once).
 * `keep` spares leases the caller still owns. Returns how many jobs were put back.
 */
export async function recoverExpiredLeases(
  store: Store,
  nowMs: number,
  opts: { all?: boolean; keep?: (jobId: string) => boolean } = {},
): Promise<number> {
  return store.write(() => {
    const { jobs, jobsLeased } = dbsOf(store);
    const end = [opts.all ? Number.MAX_SAFE_INTEGER : nowMs, KEY_MAX];
    let recovered = 0;
    for (const key of [...jobsLeased.getKeys({ start: [0], end, limit: 10_000 })] as DueKey[]) {
      if (opts.keep?.(key[1])) continue;
      jobsLeased.remove(key);
      const job = jobs.get(key[1]) as DeliveryJob | undefined;
      if (!job || job.state !== 'leased' || leaseMs(job) !== key[0]) continue;
      requeueInTxn(store, job, nowMs);
      recovered++;
    }
    return recovered;
  });
}

/** Gives a lease back without counting an attempt (shutdown): due again at dueAtMs. */
export async function releaseJob(store: Store, job: DeliveryJob, dueAtMs: number): Promise<boolean> {
  return store.write(() => {
    const current = dbsOf(store).jobs.get(job.id) as DeliveryJob | undefined;
    if (!current || current.state !== 'leased' || current.leaseUntil !== job.leaseUntil) return false;
    dbsOf(store).jobsLeased.remove([leaseMs(current), current.id]);
    requeueInTxn(store, current, dueAtMs);
    return true;
  });
}

/**
 * Jobs leased by the caller whose channel was deleted since: removed without an attempt, as the
 * channel's purge removes them (no event, no bounce; the message goes with the purge). A job
 * whose lease is no longer the caller's is left alone. Returns how many were removed.
 */
export async function discardLeasedJobs(store: Store, leased: readonly DeliveryJob[]): Promise<number> {
  return store.write(() => {
    let removed = 0;
    for (const job of leased) {
      if (!dbsOf(store).jobsLeased.doesExist([leaseMs(job), job.id])) continue;
      removeJobInTxn(store, job);
      removed++;
    }
    return removed;
  });
}

/**
 * Inside a write: the job (as stored, any state) and its entries in jobsDue, jobsLeased and
 * messageJobs. What a deleted channel's purge does to its jobs; the message record stays for it.
 */
export function removeJobInTxn(store: Store, job: DeliveryJob): void {
  const db = dbsOf(store);
  if (job.state === 'queued') db.jobsDue.remove([dueMs(job), job.id]);
  if (job.state === 'leased') db.jobsLeased.remove([leaseMs(job), job.id]);
  db.jobs.remove(job.id);
  db.messageJobs.remove([job.messageId, job.id]);
}

/** Inside a write: a leased job back to queued at dueAtMs (its lease entry already removed). */
export function requeueInTxn(store: Store, job: DeliveryJob, dueAtMs: number, changes: Partial<DeliveryJob> = {}): DeliveryJob {
  const { leaseUntil: _dropped, ...rest } = job;
  const queued: DeliveryJob = { ...rest, ...changes, state: 'queued', dueAt: new Date(dueAtMs).toISOString() };
  dbsOf(store).jobs.put(job.id, queued);
  putDueInTxn(store, queued);
  return queued;
}

/**
 * Inside a write: the job's jobsDue entry, [dueMs(job), id]. The value is the recipient domain,
 * so a lease scan can skip a busy domain's jobs without reading them.
 */
export function putDueInTxn(store: Store, job: DeliveryJob): void {
  dbsOf(store).jobsDue.put([dueMs(job), job.id], job.domain);
}

export function leaseMs(job: DeliveryJob): number {
  return job.leaseUntil ? Date.parse(job.leaseUntil) : NaN;
}

export function dueMs(job: DeliveryJob): number {
  return Date.parse(job.dueAt);
}

/** The earliest due time strictly after nowMs, for the dispatcher's wake-up timer. */
export function nextDueAfter(store: Store, nowMs: number): number | undefined {
  for (const key of dbsOf(store).jobsDue.getKeys({ start: [nowMs + 1], limit: 1 })) return (key as DueKey)[0];
  return undefined;
}

/** The ids in the due index, in due order (each should name a queued job). */
export function dueJobIds(store: Store): string[] {
  return [...dbsOf(store).jobsDue.getKeys({})].map((k) => (k as DueKey)[1]);
}

export function getJob(store: Store, id: string): DeliveryJob | undefined {
  return dbsOf(store).jobs.get(id) as DeliveryJob | undefined;
}

export interface QueueCounts {
  queued: number;
  dueNow: number;
  leased: number;
}

export function queueCounts(store: Store, nowMs: number): QueueCounts {
  return {
    queued: dbsOf(store).jobsDue.getKeysCount(),
    dueNow: dbsOf(store).jobsDue.getKeysCount({ start: [0], end: [nowMs, KEY_MAX] }),
    leased: dbsOf(store).jobsLeased.getKeysCount(),
  };
}

export type JobListState = 'open' | 'queued' | 'leased' | 'done';

/**
 * A page of jobs for the operator. queued: by due time; leased: by lease expiry; open: leased
 * then queued; done: every finished job (a full scan, acceptable for an operator command).
 */
export function listJobs(store: Store, o: { state?: JobListState; limit?: number; offset?: number } = {}): DeliveryJob[] {
  const limit = o.limit ?? 50;
  const offset = o.offset ?? 0;
  const out: DeliveryJob[] = [];
  let index = 0;
  for (const job of jobsInState(store, o.state ?? 'open')) {
    if (index++ < offset) continue;
    out.push(job);
    if (out.length >= limit) break;
  }
  return out;
}

function* jobsInState(store: Store, state: JobListState): Generator<DeliveryJob> {
  const { jobs, jobsDue, jobsLeased } = dbsOf(store);
  const byIndex = function* (keys: Iterable<unknown>) {
    for (const key of keys) {
      const job = jobs.get((key as DueKey)[1]) as DeliveryJob | undefined;
      if (job) yield job;
    }
  };
  if (state === 'leased' || state === 'open') yield* byIndex(jobsLeased.getKeys());
  if (state === 'queued' || state === 'open') yield* byIndex(jobsDue.getKeys());
  if (state === 'done') {
    for (const { value } of jobs.getRange()) if ((value as DeliveryJob).state === 'done') yield value as DeliveryJob;
  }
}

export type OperatorResult = 'ok' | 'not_found' | 'leased' | 'done';

/** `postrider queue retry`: a queued job becomes due now (its attempts and history stay). */
export async function retryJob(store: Store, jobId: string, nowMs: number): Promise<OperatorResult> {
  return store.write(() => {
    const job = dbsOf(store).jobs.get(jobId) as DeliveryJob | undefined;
    return job ? retryJobInTxn(store, job, nowMs) : 'not_found';
  });
}

/**
 * Inside a write: the retry of one job (the CLI's, and the API's for each job of a message). A
 * job whose message still waits for its composition and signature stays outside jobsDue
 * (store/signing.ts puts it in once the message is finished): it only gets its due time, so the
 * unfinished message is never sent.
 */
export function retryJobInTxn(store: Store, job: DeliveryJob, nowMs: number): OperatorResult {
  if (job.state !== 'queued') return job.state === 'leased' ? 'leased' : 'done';
  const dbs = dbsOf(store);
  if (dbs.unsigned.doesExist(job.messageId)) {
    dbs.jobs.put(job.id, { ...job, dueAt: new Date(nowMs).toISOString() } satisfies DeliveryJob);
    return 'ok';
  }
  dbs.jobsDue.remove([dueMs(job), job.id]);
  requeueInTxn(store, job, nowMs);
  return 'ok';
}
