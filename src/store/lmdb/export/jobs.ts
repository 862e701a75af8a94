/**
 * Delivery jobs as transfer records, in every state: open ones (queued, held, leased) and
 * finished ones (the message details show their history).
 *
 * A queued job is due when it has its jobsDue entry; one without (its message waits in
 * `unsigned` for the finishing stage) is held. A leased job was in flight when the daemon
 * stopped: no lease outlives its daemon (the copy refuses to run beside one), so it is copied
 * queued and due at the copy's time, as LMDB's recoverExpiredLeases would put it back at start.
 */
import type { DeliveryJob } from '../../../domain/types.js';
import type { TransferJob } from '../../port/transfer.js';
import { entriesOf, type ExportContext } from './context.js';

type StoredJob = DeliveryJob & { leaseOwner?: string; leaseGeneration?: number };

export function* jobs(c: ExportContext): Generator<TransferJob> {
  for (const { value } of entriesOf(c.dbs.jobs)) yield transferJob(c, value as StoredJob);
}

function transferJob(c: ExportContext, stored: StoredJob): TransferJob {
  const { leaseOwner: _owner, leaseGeneration, ...job } = stored;
  const generation = leaseGeneration ?? 0;
  if (job.state === 'leased') {
    const { leaseUntil: _until, ...rest } = job;
    return { job: { ...rest, state: 'queued', dueAt: new Date(c.nowMs).toISOString() }, held: false, leaseGeneration: generation };
  }
  const held = job.state === 'queued' && !c.dbs.jobsDue.doesExist([Date.parse(job.dueAt), job.id]);
  return { job, held, leaseGeneration: generation };
}
