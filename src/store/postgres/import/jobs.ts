/**
 * Importing delivery jobs (schema/queue.ts): open jobs into `jobs` (held, or queued in the due
 * index), finished ones into `finished_jobs`, each with the doc the port shows (docOf: no lease
 * bookkeeping) and, on open jobs, the lease generation they keep for good. No job arrives leased:
 * the copy runs with the daemon stopped (store/port/transfer.ts TransferJob).
 */
import type { TransferJob } from '../../port/transfer.js';
import type { Tx } from '../client.js';
import { docOf } from '../queue-rows.js';

export async function writeJobs(tx: Tx, records: TransferJob[]): Promise<void> {
  const open = records.filter((r) => r.job.state !== 'done');
  const done = records.filter((r) => r.job.state === 'done');
  await Promise.all([writeOpen(tx, open), writeFinished(tx, done)]);
}

async function writeOpen(tx: Tx, records: TransferJob[]): Promise<void> {
  if (records.length === 0) return;
  const rows = records.map(({ job, held, leaseGeneration }) => ({
    id: job.id,
    message_id: job.messageId,
    account_id: job.accountId,
    channel_id: job.channelId,
    domain: job.domain,
    state: held ? 'held' : 'queued',
    due_at: Date.parse(job.dueAt),
    lease_generation: leaseGeneration,
    doc: docOf(job),
  }));
  await tx`
    INSERT INTO jobs (id, message_id, account_id, channel_id, domain, state, due_at, lease_generation, doc)
    SELECT * FROM jsonb_to_recordset(${tx.json(rows as never)}) AS x(id text, message_id text, account_id text,
      channel_id text, domain text, state text, due_at int8, lease_generation int4, doc jsonb)`;
}

async function writeFinished(tx: Tx, records: TransferJob[]): Promise<void> {
  if (records.length === 0) return;
  const rows = records.map(({ job }) => ({ id: job.id, message_id: job.messageId, account_id: job.accountId, channel_id: job.channelId, doc: docOf(job) }));
  await tx`
    INSERT INTO finished_jobs (id, message_id, account_id, channel_id, doc)
    SELECT * FROM jsonb_to_recordset(${tx.json(rows as never)}) AS x(id text, message_id text, account_id text, channel_id text, doc jsonb)`;
}
