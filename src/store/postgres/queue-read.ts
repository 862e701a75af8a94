/**
 * The delivery queue's reads (store/port/queue.ts): the dispatcher's wake-up, the gauges, the
 * operator's pages and one job. Each is one statement on the pool, over the partial indexes of
 * schema/queue.ts; finished jobs are read from finished_jobs.
 */
import type { DeliveryJob } from '../../domain/types.js';
import type { JobListState, QueueCounts } from '../port/queue.js';
import type { Db } from './client.js';

/** The earliest due time strictly after nowMs: one probe of the due index. */
export async function nextDueAfter(db: Db, nowMs: number): Promise<number | undefined> {
  const [row] = await db<{ due_at: number }[]>`
    SELECT due_at FROM jobs WHERE state = 'queued' AND due_at > ${nowMs} ORDER BY due_at, id LIMIT 1`;
  return row?.due_at;
}

/**
 * Queued, due-now and leased jobs. Counted over the partial indexes (index-only scans: no job
 * row is read), so the cost grows with the queue's size, not with the jobs ever sent; PostgreSQL
 * keeps no O(1) count, and a counter row every lease and outcome updated would serialize them.
 */
export async function queueCounts(db: Db, nowMs: number): Promise<QueueCounts> {
  const [row] = await db<QueueCounts[]>`
    SELECT
      (SELECT count(*) FROM jobs WHERE state = 'queued') AS "queued",
      (SELECT count(*) FROM jobs WHERE state = 'queued' AND due_at <= ${nowMs}) AS "dueNow",
      (SELECT count(*) FROM jobs WHERE state = 'leased') AS "leased"`;
  return row;
}

/**
 * A page of jobs for the operator. queued: by due time; leased: by lease expiry; open: leased
 * then queued; done: every finished job, in id order (as the LMDB engine's full scan).
 */
export async function listJobs(db: Db, o: { state?: JobListState; limit?: number; offset?: number }): Promise<DeliveryJob[]> {
  const limit = o.limit ?? 50;
  const offset = o.offset ?? 0;
  const state = o.state ?? 'open';
  const rows =
    state === 'queued'
      ? await db<{ doc: DeliveryJob }[]>`SELECT doc FROM jobs WHERE state = 'queued' ORDER BY due_at, id LIMIT ${limit} OFFSET ${offset}`
      : state === 'leased'
        ? await db<{ doc: DeliveryJob }[]>`SELECT doc FROM jobs WHERE state = 'leased' ORDER BY lease_until, id LIMIT ${limit} OFFSET ${offset}`
        : state === 'done'
          ? await db<{ doc: DeliveryJob }[]>`SELECT doc FROM finished_jobs ORDER BY id LIMIT ${limit} OFFSET ${offset}`
          : await db<{ doc: DeliveryJob }[]>`
              SELECT doc FROM (
                (SELECT doc, 0 AS part, lease_until AS at, id FROM jobs WHERE state = 'leased' ORDER BY lease_until, id LIMIT ${limit + offset})
                UNION ALL
                (SELECT doc, 1 AS part, due_at AS at, id FROM jobs WHERE state = 'queued' ORDER BY due_at, id LIMIT ${limit + offset})
              ) open ORDER BY part, at, id LIMIT ${limit} OFFSET ${offset}`;
  return rows.map((r) => r.doc);
}

/** One job in any state: two primary-key probes. */
export async function getJob(db: Db, jobId: string): Promise<DeliveryJob | undefined> {
  const [row] = await db<{ doc: DeliveryJob }[]>`
    SELECT doc FROM jobs WHERE id = ${jobId}
    UNION ALL SELECT doc FROM finished_jobs WHERE id = ${jobId}
    LIMIT 1`;
  return row?.doc;
}
