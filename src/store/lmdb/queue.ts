/**
 * The delivery queue's store verbs: leasing due jobs, giving leases back, recovering leases
 * whose owner died, and the operator's list/retry. Recording an attempt's outcome is in
 * queue-outcome.ts. Every verb that changes state is one durable transaction.
 *
 * States and indexes (layout.ts): a queued job has one jobsDue entry [dueAtMs, jobId]; a
 * leased job has one jobsLeased entry [leaseUntilMs, jobId]; a done job has neither. The job's
 * dueAt/leaseUntil fields always equal the time in its index key, so the key can be rebuilt
 * from the record.
 *
 * Fencing (store/port/queue.ts): a lease is the job's leaseUntil, owner and generation. The
 * jobsLeased entry's value is [generation, owner] (1 in entries written before leases had an
 * owner), and the job record keeps leaseOwner while leased and leaseGeneration for good, so
 * the next lease takes the next generation. An outcome, release or discard acts only while
 * the entry of the caller's lease holds the caller's generation and owner.
 */
import type { DeliveryJob } from '../../domain/types.js';
import type { DueKey, JobListState, LeasedJob, LeaseOptions, LeaseResult, OperatorResult, QueueCounts } from '../port/queue.js';
import { dbsOf } from './databases.js';
import type { Store } from './env.js';
import { deletedChannels } from './channel-records.js';
import { KEY_MAX } from './layout.js';

export type { DueKey, JobListState, LeasedJob, LeaseOptions, LeaseResult, OperatorResult, QueueCounts } from '../port/queue.js';

/** The owner of leases taken without one (the engine's own tests): the single node's default id. */
export const DEFAULT_LEASE_OWNER = 'local';

/** A job record as stored: the delivery job and its lease bookkeeping. */
type StoredJob = DeliveryJob & { leaseOwner?: string; leaseGeneration?: number };

/** A jobsLeased entry's value: [generation, owner]; 1 in entries written before leases had an owner. */
type LeaseEntry = [number, string] | 1;

/** Moves up to `max` due jobs (dueAt <= now) to leased. Reads the due index only up to now. */
export async function leaseDueJobs(store: Store, o: Omit<LeaseOptions, 'owner'> & { owner?: string }): Promise<LeaseResult> {
  if (o.max <= 0) return { jobs: [], skipped: 0, discarded: 0 };
  const owner = o.owner ?? DEFAULT_LEASE_OWNER;
  const scanLimit = o.scanLimit ?? Math.max(500, o.max * 20);
  return store.write(() => {
    const { jobs, jobsDue, jobsLeased } = dbsOf(store);
    // Collected first: the loop below changes the index it came from.
    const entries = [...jobsDue.getRange({ start: o.after ?? [0], end: [o.nowMs, KEY_MAX], limit: scanLimit + (o.after ? 1 : 0) })] as Array<{ key: DueKey; value: unknown }>;
    const out: LeasedJob[] = [];
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
      const job = jobs.get(key[1]) as StoredJob | undefined;
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
      // Object.assign rather than {...job, state, leaseUntil, …}: on Node 20's V8 a literal that
      // adds fields its spread's source lacks (a queued job has no lease) builds new hidden
      // classes on every call, about 2 µs per job here (bench/RESULTS.md, issue 36).
      const leased: LeasedJob = Object.assign({}, job, { state: 'leased' as const, leaseUntil, leaseOwner: owner, leaseGeneration: (job.leaseGeneration ?? 0) + 1 });
      jobsDue.remove(key);
      jobs.put(job.id, leased);
      jobsLeased.put([leaseUntilMs, job.id], [leased.leaseGeneration, owner] satisfies LeaseEntry);
      out.push(leased);
    }
    const truncated = examined >= scanLimit && out.length < o.max;
    return { jobs: out, skipped, discarded, resumeAfter: truncated ? last : undefined };
  });
}

/**
 * Leases that expired at nowMs go back to due now: their owner crashed or hung, so delivery is
 * retried (at-least-once). With `owner` (that node's start): its own leases, left by its
 * previous run, and those that name no owner go back too, whatever their expiry; another
 * node's live lease stays. `keep` spares leases the caller still owns. Returns how many jobs
 * were put back.
 */
export async function recoverExpiredLeases(store: Store, o: { nowMs: number; owner?: string; keep?: (jobId: string) => boolean }): Promise<number> {
  return store.write(() => {
    const { jobs, jobsLeased } = dbsOf(store);
    const end = [o.owner === undefined ? o.nowMs : Number.MAX_SAFE_INTEGER, KEY_MAX];
    let recovered = 0;
    for (const { key, value } of [...jobsLeased.getRange({ start: [0], end, limit: 10_000 })] as Array<{ key: DueKey; value: LeaseEntry }>) {
      if (key[0] > o.nowMs && !(value === 1 || value[1] === o.owner)) continue;
      if (o.keep?.(key[1])) continue;
      jobsLeased.remove(key);
      const job = jobs.get(key[1]) as StoredJob | undefined;
      if (!job || job.state !== 'leased' || leaseMs(job) !== key[0]) continue;
      requeueInTxn(store, job, o.nowMs);
      recovered++;
    }
    return recovered;
  });
}

/**
 * Inside a write: whether the job is still leased under the caller's lease (its expiry, owner
 * and generation), read from the jobsLeased entry alone (no job record decoded): every verb that
 * ends or changes a lease removes that entry in the same write.
 */
export function holdsLeaseInTxn(store: Store, job: DeliveryJob): boolean {
  if (job.state !== 'leased') return false;
  const { leaseOwner, leaseGeneration } = job as StoredJob;
  const entry = dbsOf(store).jobsLeased.get([leaseMs(job), job.id]) as LeaseEntry | undefined;
  return Array.isArray(entry) && entry[0] === leaseGeneration && entry[1] === leaseOwner;
}

/** Gives a lease back without counting an attempt (shutdown): due again at dueAtMs. */
export async function releaseJob(store: Store, job: LeasedJob, dueAtMs: number): Promise<boolean> {
  return store.write(() => {
    if (!holdsLeaseInTxn(store, job)) return false;
    const current = dbsOf(store).jobs.get(job.id) as StoredJob;
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
export async function discardLeasedJobs(store: Store, leased: readonly LeasedJob[]): Promise<number> {
  return store.write(() => {
    let removed = 0;
    for (const job of leased) {
      if (!holdsLeaseInTxn(store, job)) continue;
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
  const { leaseUntil: _until, leaseOwner: _owner, ...rest } = job as StoredJob;
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

/**
 * The job as the port shows it outside a lease: without the engine's lease bookkeeping
 * (leaseOwner, leaseGeneration), so operators' and the API's views read as before fencing.
 */
export function publicJob(job: DeliveryJob): DeliveryJob {
  const stored = job as StoredJob;
  if (stored.leaseOwner === undefined && stored.leaseGeneration === undefined) return job;
  const { leaseOwner: _owner, leaseGeneration: _generation, ...rest } = stored;
  return rest;
}

export function queueCounts(store: Store, nowMs: number): QueueCounts {
  return {
    queued: dbsOf(store).jobsDue.getKeysCount(),
    dueNow: dbsOf(store).jobsDue.getKeysCount({ start: [0], end: [nowMs, KEY_MAX] }),
    leased: dbsOf(store).jobsLeased.getKeysCount(),
  };
}

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
