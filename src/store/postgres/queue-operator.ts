/**
 * The operator's retry and drop of one job (`postrider queue retry|drop`, store/port/queue.ts),
 * and the drop of queued jobs that the drop of a message's jobs shares (account-queue-jobs.ts).
 *
 * Atomic across nodes: each verb first locks the job's row (SELECT ... FOR UPDATE; a lease or an
 * outcome in progress holds it, so the verb waits and then reads the committed state under READ
 * COMMITTED), decides on the state it read and writes under the same lock. A job that left the
 * open table meanwhile (finished) is found in finished_jobs by the next statement.
 */
import { dropEvents } from '../../domain/attempt-outcome.js';
import type { DeliveryJob } from '../../domain/types.js';
import type { OperatorOutcome, OperatorResult } from '../port/queue.js';
import type { Tx } from './client.js';
import type { PgContext } from './context.js';
import { appendEvents } from './event-log.js';
import { closeMessageJobs, messageRecords } from './messages-tx.js';
import { finishQueuedJobs } from './queue-tx.js';
import { iso } from './queue-rows.js';

type RowState = 'held' | 'queued' | 'leased';

/** The job locked (open) or as finished, with its row's state; undefined for an unknown id. */
async function lockJob(tx: Tx, jobId: string): Promise<{ state: RowState | 'done'; doc: DeliveryJob } | undefined> {
  const [open] = await tx<{ state: RowState; doc: DeliveryJob }[]>`SELECT state, doc FROM jobs WHERE id = ${jobId} FOR UPDATE`;
  if (open) return open;
  const [done] = await tx<{ doc: DeliveryJob }[]>`SELECT doc FROM finished_jobs WHERE id = ${jobId}`;
  return done && { state: 'done', doc: done.doc };
}

function notQueued(state: RowState | 'done'): OperatorResult | undefined {
  return state === 'leased' ? 'leased' : state === 'done' ? 'done' : undefined;
}

/**
 * A queued job becomes due now (attempts and history stay). A held one (its message still
 * being composed and signed) only gets its due time: it stays held, so the unfinished message is
 * never sent (makeMessagesDue makes it due once finished).
 */
export async function retryJob(ctx: PgContext, jobId: string, nowMs: number): Promise<OperatorOutcome> {
  return ctx.begin(async (tx) => {
    const found = await lockJob(tx, jobId);
    if (!found) return { result: 'not_found', job: undefined };
    const refused = notQueued(found.state);
    if (refused) return { result: refused, job: found.doc };
    const [job] = await retryLockedJobs(tx, [jobId], nowMs);
    return { result: 'ok', job };
  });
}

/** Inside a transaction holding the rows' locks: the queued and held ones among jobIds due at nowMs. */
export async function retryLockedJobs(tx: Tx, jobIds: readonly string[], nowMs: number): Promise<DeliveryJob[]> {
  if (jobIds.length === 0) return [];
  const rows = await tx<{ doc: DeliveryJob }[]>`
    UPDATE jobs SET due_at = ${nowMs}, doc = doc || jsonb_build_object('dueAt', ${iso(nowMs)}::text)
    WHERE id = ANY(${jobIds as string[]}::text[]) AND state IN ('queued', 'held')
    RETURNING doc`;
  return rows.map((r) => r.doc);
}

/** A queued job ends as bounced for each recipient (reason "dropped by operator"), with the message's open-job count. */
export async function dropJob(ctx: PgContext, jobId: string, now: Date): Promise<OperatorOutcome> {
  return ctx.begin(async (tx) => {
    const found = await lockJob(tx, jobId);
    if (!found) return { result: 'not_found', job: undefined };
    const refused = notQueued(found.state);
    if (refused) return { result: refused, job: found.doc };
    const [job] = await dropLockedJobs(tx, [found.doc], now);
    return { result: 'ok', job };
  });
}

/**
 * Inside a transaction holding the rows' locks: these queued (or held) jobs of one message end
 * as the operator's drop ends them: done (moved to finished_jobs), a bounced event per
 * recipient, the message's open-job count down by one per job. Events last (event-log.ts).
 * Returns the jobs as finished, in id order.
 */
export async function dropLockedJobs(tx: Tx, jobs: readonly DeliveryJob[], now: Date): Promise<DeliveryJob[]> {
  const finished = await finishQueuedJobs(tx, jobs.map((j) => j.id));
  if (finished.length === 0) return [];
  const messages = await messageRecords(tx, [...new Set(finished.map((j) => j.messageId))]);
  const ours = finished.filter((j) => messages.has(j.messageId));
  const at = now.toISOString();
  await closeMessageJobs(tx, ours.map((j) => ({ messageId: j.messageId, jobs: 1, at })));
  await appendEvents(tx, ours.flatMap((j) => dropEvents(messages.get(j.messageId)!, j, at)));
  return finished;
}
