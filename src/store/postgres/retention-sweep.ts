/**
 * RetentionPort.sweepBatch: one short transaction removing up to `batch` of the oldest events
 * older than the cutoff from the low end of the log (the events group's removeOldEvents moves the
 * floor, so the kept events stay one contiguous run and `after` paging goes on working), with the
 * messages of the accepted events among them (retention-messages.ts). It stops at the accepted
 * event of a message not finished, or finished less than retention.days ago
 * (domain/retention-hold.ts). Statistics counters stay.
 *
 * Bounded: every statement touches at most about `batch` rows; the sweeper (src/retention/) calls
 * again while `more`. Never one huge DELETE: a long transaction would hold PostgreSQL's xmin
 * horizon back and bloat every table.
 *
 * Partitions: events and their terms are partitioned by seq range (seq order is time order up
 * to late events; schema/events-stats.ts). Removing events moves the floor; once it has passed
 * a partition's upper bound, the whole partition is dropped after the batch's transaction
 * (event-partitions.ts), in a short transaction of its own: a DROP takes the parent's ACCESS
 * EXCLUSIVE lock, which must not be held while the batch's other statements run. A drop that
 * timed out on its lock is tried again after the next batch. The floor rule (remove from the low
 * end only) is what makes that possible; the messages stay row-wise, and so do the rows of the
 * DEFAULT partitions.
 */
import type { SweepBatchOptions, SweepResult } from '../port/retention.js';
import type { PgContext } from './context.js';
import { removeOldEvents } from './event-log.js';
import { dropPartitionsBelowFloor } from './event-partitions.js';
import { expireInbound, expireMessages, expireReportMarks, retryParked } from './retention-messages.js';

/** The advisory lock class of the sweep (two-int4 keys: apart from the migrations' bigint lock). */
const SWEEP_LOCK_CLASS = 0x5245_544e; // "RETN"

/**
 * Sweepers on several nodes take turns (a transaction-scoped advisory lock): two sweeps walking
 * from the same floor would remove the same events. The events go first (the log's floor), then
 * the messages, the parked ones, the report marks and the received messages.
 */
export async function sweepBatch(ctx: PgContext, o: SweepBatchOptions): Promise<SweepResult> {
  const result = await ctx.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(${SWEEP_LOCK_CLASS}::int4, 0)`;
    const removed = await removeOldEvents(tx, o);
    let messages = await expireMessages(tx, removed.accepted.map((a) => a.messageId));
    messages += await retryParked(tx, o.batch);
    const marks = await expireReportMarks(tx, o.cutoffMs, o.batch);
    const inboundMessages = await expireInbound(tx, o.cutoffMs, o.batch);
    const held = removed.heldBy !== undefined ? { heldBy: removed.heldBy } : {};
    return { events: removed.events, messages, inboundMessages, more: removed.more || marks >= o.batch || inboundMessages >= o.batch, ...held };
  });
  await dropPartitionsBelowFloor(ctx.sql);
  return result;
}
