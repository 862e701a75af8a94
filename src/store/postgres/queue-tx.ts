/**
 * What other groups' verbs do to the delivery queue inside their own transaction (the shared
 * brief's cross-group table): a submission's commit inserts its jobs, the finishing stage makes
 * a signed message's jobs due or ends an unfinished one's, a broadcast's cancel ends a message's
 * untouched jobs, retention removes jobs (a channel's purge deletes its rows by channel_id,
 * channel-purge-batch.ts). Every function takes the caller's transaction first and writes
 * nothing outside it. Tables: schema/queue.ts.
 */
import type { DeliveryJob } from '../../domain/types.js';
import type { Db, Tx } from './client.js';
import { jsonb } from './queue-rows.js';

export interface NewJob {
  /** The job as committed: state queued, attempts 0, dueAt its due time. */
  job: DeliveryJob;
  /**
   * false: its message still waits for composition and signing; the job is held (not due, not
   * counted, not leased) until makeMessagesDue (the LMDB engine keeps it outside jobsDue).
   */
  due: boolean;
}

/** A submission's jobs, one multi-row INSERT. */
export async function insertJobs(tx: Tx, jobs: readonly NewJob[]): Promise<void> {
  if (jobs.length === 0) return;
  const rows = jobs.map(({ job, due }) => ({
    id: job.id,
    message_id: job.messageId,
    account_id: job.accountId,
    channel_id: job.channelId,
    domain: job.domain,
    state: due ? 'queued' : 'held',
    due_at: Date.parse(job.dueAt),
    doc: jsonb(tx, job),
  }));
  await tx`INSERT INTO jobs ${tx(rows, 'id', 'message_id', 'account_id', 'channel_id', 'domain', 'state', 'due_at', 'doc')}`;
}

/**
 * The finishing stage stored these messages' signed bodies: their held jobs become due at their
 * dueAt (a retry meanwhile may have moved it). Returns how many jobs became due.
 */
export async function makeMessagesDue(tx: Tx, messageIds: readonly string[]): Promise<number> {
  if (messageIds.length === 0) return 0;
  const rows = await tx`
    UPDATE jobs SET state = 'queued'
    WHERE message_id = ANY(${messageIds as string[]}::text[]) AND state = 'held'
    RETURNING id`;
  return rows.length;
}

/**
 * The message's jobs in any state (finished ones too), its open ones locked FOR UPDATE until the
 * caller's commit: no lease, outcome or operator verb changes them meanwhile, so the caller may
 * decide on what it read (a cancel: none leased nor attempted) and then finishQueuedJobs.
 */
export async function lockJobsOfMessage(tx: Tx, messageId: string): Promise<DeliveryJob[]> {
  const open = await tx<{ doc: DeliveryJob }[]>`SELECT doc FROM jobs WHERE message_id = ${messageId} ORDER BY id FOR UPDATE`;
  const done = await tx<{ doc: DeliveryJob }[]>`SELECT doc FROM finished_jobs WHERE message_id = ${messageId} ORDER BY id`;
  return [...open, ...done].map((r) => r.doc).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/**
 * The named jobs that are still queued (or held) end: state done, moved to finished_jobs, with
 * `changes` (a broadcast cancel's canceledAt). Leased and finished ones are left as they are.
 * The message's open-job count is the caller's (messages-tx.ts). Returns the jobs as finished,
 * in id order. Atomic: the DELETE takes each row's lock and re-checks its state.
 */
export async function finishQueuedJobs(tx: Tx, jobIds: readonly string[], changes: { canceledAt?: string } = {}): Promise<DeliveryJob[]> {
  if (jobIds.length === 0) return [];
  const patch = { state: 'done', ...changes };
  const rows = await tx<{ doc: DeliveryJob }[]>`
    WITH gone AS (
      DELETE FROM jobs WHERE id = ANY(${jobIds as string[]}::text[]) AND state IN ('queued', 'held')
      RETURNING id, message_id, account_id, channel_id, doc
    )
    INSERT INTO finished_jobs (id, message_id, account_id, channel_id, doc)
    SELECT id, message_id, account_id, channel_id, doc || ${jsonb(tx, patch)} FROM gone
    RETURNING doc`;
  return rows.map((r) => r.doc).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/**
 * Retention or a purge removes these messages: their jobs (any state) leave the store with
 * them. Returns how many were removed.
 */
export async function removeJobsOfMessages(tx: Tx, messageIds: readonly string[]): Promise<number> {
  if (messageIds.length === 0) return 0;
  const ids = messageIds as string[];
  const open = await tx`DELETE FROM jobs WHERE message_id = ANY(${ids}::text[]) RETURNING id`;
  const done = await tx`DELETE FROM finished_jobs WHERE message_id = ANY(${ids}::text[]) RETURNING id`;
  return open.length + done.length;
}

/** The message's jobs in any state, in id order (a read; no lock). */
export async function jobsOfMessageIn(db: Db, messageId: string): Promise<DeliveryJob[]> {
  const rows = await db<{ doc: DeliveryJob }[]>`
    SELECT doc FROM jobs WHERE message_id = ${messageId}
    UNION ALL SELECT doc FROM finished_jobs WHERE message_id = ${messageId}`;
  return rows.map((r) => r.doc).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/**
 * A broadcast's cancel (LMDB message-schedule.ts cancelUntouchedInTxn) for many messages at
 * once: of these messages, those whose jobs are all still queued (or held) and unattempted, with
 * none leased or finished, end all their jobs as finishQueuedJobs does with canceledAt. Returns
 * messageId → the jobs ended (as finished), for the messages canceled (the caller closes them,
 * messages-tx.ts, and records their canceled events). Atomic across nodes: the messages' open
 * rows are locked first (FOR UPDATE, in id order), so a lease on another node either committed
 * before (the message is left alone) or waits.
 */
export async function cancelUntouchedJobs(tx: Tx, messageIds: readonly string[], canceledAt: string): Promise<Map<string, DeliveryJob[]>> {
  const out = new Map<string, DeliveryJob[]>();
  if (messageIds.length === 0) return out;
  const ids = messageIds as string[];
  const open = await tx<{ id: string; message_id: string; state: string; attempts: number }[]>`
    SELECT id, message_id, state, (doc->>'attempts')::int4 AS attempts FROM jobs
    WHERE message_id = ANY(${ids}::text[]) ORDER BY id FOR UPDATE`;
  const finished = await tx<{ message_id: string }[]>`SELECT DISTINCT message_id FROM finished_jobs WHERE message_id = ANY(${ids}::text[])`;
  const touched = new Set(finished.map((r) => r.message_id));
  const jobsOf = new Map<string, string[]>();
  for (const j of open) {
    if (j.state === 'leased' || j.attempts > 0) touched.add(j.message_id);
    jobsOf.set(j.message_id, [...(jobsOf.get(j.message_id) ?? []), j.id]);
  }
  const ending = [...jobsOf].filter(([m]) => !touched.has(m));
  for (const job of await finishQueuedJobs(tx, ending.flatMap(([, jobIds]) => jobIds), { canceledAt })) {
    out.set(job.messageId, [...(out.get(job.messageId) ?? []), job]);
  }
  return out;
}
