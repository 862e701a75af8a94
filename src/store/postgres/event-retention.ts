/**
 * Retention's half of the event log (RetentionPort.sweepBatch, the retention group's
 * retention-sweep.ts calls it first in its transaction): the oldest events leave from the low
 * end of the log only, so the kept events stay one run [floor, last] and `after` paging goes on
 * working during a sweep (store/lmdb/retention.ts sweepRetentionBatch, its event part).
 * Statistics counters stay.
 *
 * Bounded: one SELECT of at most batch + 1 rows and DELETEs over the seq range just read.
 * Never the appenders' lock: the floor has its own row (event_log_floor), locked here, so a
 * sweep neither waits for an append nor holds one up.
 *
 * The events and their terms are deleted row-wise only in the DEFAULT partitions (the appends
 * that outran partition maintenance): in a range partition they stay below the floor, unseen
 * (every reader bounds seq >= floor), until the whole partition is below it and is dropped
 * (event-partitions.ts dropPartitionsBelowFloor, after this transaction). Why not delete them in
 * the partition holding the floor and drop only the others: the floor crosses every partition
 * batch by batch, so every row would be deleted one by one before its partition is dropped and
 * the drop would save nothing. The queue marks and the clock rows are few: row-wise as before.
 *
 * Nothing of a message that is not finished goes (domain/retention-hold.ts): the walk stops at
 * the accepted event of one with an open job or waiting to be composed or signed, or finished
 * less than retention.days ago (its record and unfinished entry are read with the events, in the
 * same statement), and the floor waits there until it may pass.
 */
import { holdsRetention } from '../../domain/retention-hold.js';
import type { SweepBatchOptions } from '../port/retention.js';
import type { Tx } from './client.js';

export interface RemovedEvents {
  events: number;
  /** The removed accepted events' messages, in seq order (retention removes or parks them). */
  accepted: { messageId: string; accountId: string; channelId: string }[];
  /** `batch` events went and seqs are left above the new floor. */
  more: boolean;
  /** The walk stopped at this message's accepted event (isHeld). */
  heldBy?: string;
}

interface OldRow {
  seq: number;
  ts_ms: number;
  event_type: string;
  message_id: string;
  account_id: string;
  channel_id: string;
  /** An accepted event's message, when it exists (null on the other events). */
  open_jobs: number | null;
  finished_at: string | null;
  finishing: boolean;
}

/** An accepted event whose message retention holds: the walk stops there. */
function isHeld(r: OldRow, o: SweepBatchOptions): boolean {
  if (r.event_type !== 'accepted' || r.open_jobs === null) return false;
  const accepted = { atMs: Number(r.ts_ms), holdFromMs: o.holdFromMs ?? Number.NEGATIVE_INFINITY };
  return holdsRetention({ openJobs: r.open_jobs, ...(r.finished_at !== null && { finishedAt: r.finished_at }) }, r.finishing, o.cutoffMs, accepted);
}

/** Where the walk from the floor stops, and what it removes on the way (holes are skipped). */
function walkFromFloor(rows: readonly OldRow[], last: number, o: SweepBatchOptions): { removed: OldRow[]; floor: number; more: boolean; heldBy?: string } {
  const removed: OldRow[] = [];
  for (const r of rows) {
    if (removed.length >= o.batch) return { removed, floor: removed[removed.length - 1].seq + 1, more: true };
    if (r.ts_ms >= o.cutoffMs) return { removed, floor: r.seq, more: false };
    if (isHeld(r, o)) return { removed, floor: r.seq, more: false, heldBy: r.message_id };
    removed.push(r);
  }
  return { removed, floor: last + 1, more: false };
}

/**
 * Removes up to `batch` of the oldest events stamped before cutoffMs (moves the floor past them;
 * deletes those in the DEFAULT partitions), with their term rows, the queue marks of removed
 * accepted events and the event clock rows below the new floor but the last of them (it still
 * holds the clock value of the floor's event); moves the floor.
 */
export async function removeOldEvents(tx: Tx, o: SweepBatchOptions): Promise<RemovedEvents> {
  const [{ floor }] = await tx<{ floor: number }[]>`SELECT floor FROM event_log_floor FOR UPDATE`;
  // One statement, one snapshot: seqs above the `last` it reads are not in `rows` either.
  const [{ last, rows }] = await tx<{ last: number; rows: OldRow[] }[]>`
    SELECT (SELECT last FROM event_log_head) AS last,
      coalesce((SELECT jsonb_agg(o ORDER BY o.seq) FROM (
        SELECT e.*, m.open_jobs, m.doc->>'finishedAt' AS finished_at, u.message_id IS NOT NULL AS finishing
        FROM (SELECT seq, ts_ms, event_type, message_id, account_id, channel_id FROM events
          WHERE seq >= ${floor} ORDER BY seq LIMIT ${o.batch + 1}) e
        LEFT JOIN messages m ON e.event_type = 'accepted' AND m.id = e.message_id
        LEFT JOIN unfinished_messages u ON e.event_type = 'accepted' AND u.message_id = e.message_id) o), '[]'::jsonb) AS rows`;
  const walk = walkFromFloor(rows, last, o);
  const more = walk.more && walk.floor <= last;
  const held = walk.heldBy !== undefined ? { heldBy: walk.heldBy } : {};
  if (walk.floor === floor) return { events: 0, accepted: [], more, ...held };
  const accepted = walk.removed.filter((r) => r.event_type === 'accepted');
  await tx`DELETE FROM event_terms_default WHERE seq >= ${floor} AND seq < ${walk.floor}`;
  await tx`DELETE FROM events_default WHERE seq >= ${floor} AND seq < ${walk.floor}`;
  if (accepted.length > 0) await tx`DELETE FROM message_queue WHERE message_id = ANY(${accepted.map((r) => r.message_id)}::text[])`;
  await tx`DELETE FROM event_clock WHERE seq < (SELECT max(seq) FROM event_clock WHERE seq <= ${walk.floor})`;
  await tx`UPDATE event_log_floor SET floor = ${walk.floor}`;
  return {
    events: walk.removed.length,
    accepted: accepted.map((r) => ({ messageId: r.message_id, accountId: r.account_id, channelId: r.channel_id })),
    more,
    ...held,
  };
}
