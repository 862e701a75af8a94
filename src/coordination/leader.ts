/**
 * Running a piece of work as the leader of its task, over any Coordination: the periodic jobs
 * that one node at a time does for the service (the retention sweep, the channel purge, the
 * domain recheck, TLS-RPT's daily reports) wrap each run in it. A node that is not the leader
 * skips the run (the leader does it) and tries again at its next one, so the work moves to
 * another node within one period when its leader stops.
 *
 * The work gets the lease: a run longer than the ttl renews it between its batches and stops
 * when the renewal fails (another node leads by then).
 */
import type { Coordination, LeaderTask, Lease } from './port.js';

export type LeaderRun<T> = { ran: true; value: T } | { ran: false };

export async function runAsLeader<T>(coordination: Pick<Coordination, 'lead'>, task: LeaderTask, ttlMs: number, work: (lease: Lease) => Promise<T>): Promise<LeaderRun<T>> {
  const lease = await coordination.lead(task, ttlMs);
  if (!lease) return { ran: false };
  try {
    return { ran: true, value: await work(lease) };
  } finally {
    await lease.release();
  }
}
