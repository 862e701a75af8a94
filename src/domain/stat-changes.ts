/**
 * Change marks of an account's statistics counters: what a reader that keeps the sums of closed
 * buckets (statistics/series-cache.ts) must forget.
 *
 * A counter normally grows in the quarter hour that is under way, which no reader treats as
 * closed. Three writes change counters a reader may already hold as final:
 *   - a recipient bounced after it was delivered (an asynchronous DSN): `delivered` goes down in
 *     the delivery's quarter hour, hours or days ago (stat-counters.ts's counting rule);
 *   - an event stamped in a quarter hour that has just ended (a commit that straddles the edge);
 *   - a channel's delete: its counters stop counting at once, in every bucket.
 * Each such write moves the account's `epoch` on by one and records the earliest quarter hour it
 * touched (0 for a delete: everything), in the same commit as the counters. Only the last
 * MAX_CHANGE_MARKS are kept: a reader further behind forgets everything.
 */
import { QUARTER_MS, quarterOf } from './stat-counters.js';

/** An account's change marks as the store keeps them. */
export interface StatChanges {
  /** How many changes there were; 0 before the first. */
  epoch: number;
  /** The earliest quarter hour each of the last changes touched, oldest first; the last is `epoch`'s. */
  quarters: number[];
}

export const MAX_CHANGE_MARKS = 64;

export const NO_CHANGES: StatChanges = { epoch: 0, quarters: [] };

/** The marks after one more change that touched quarter hours from `quarter` on. */
export function withChange(marks: StatChanges, quarter: number): StatChanges {
  const quarters = [...marks.quarters, Math.max(0, quarter)];
  return { epoch: marks.epoch + 1, quarters: quarters.slice(-MAX_CHANGE_MARKS) };
}

/**
 * What changed after `seenEpoch`, as the first instant (ms) from which sums may differ: null when
 * nothing did, 0 when everything may have (the reader is too far behind, or the marks went back:
 * another store).
 */
export function changedFromMs(marks: StatChanges, seenEpoch: number): number | null {
  if (marks.epoch === seenEpoch) return null;
  const missed = marks.epoch - seenEpoch;
  if (missed < 0 || missed > marks.quarters.length) return 0;
  return Math.min(...marks.quarters.slice(-missed)) * QUARTER_MS;
}

/** Whether counters added to `quarter` change what a reader may hold as closed (writer's clock). */
export function isPastQuarter(quarter: number, nowMs: number): boolean {
  return quarter < quarterOf(nowMs);
}

/** Notes that an account's counters changed from `quarter` on, keeping the earliest per account: one write's changes. */
export function noteChange(changed: Map<string, number>, accountId: string, quarter: number): void {
  const earlier = changed.get(accountId);
  changed.set(accountId, earlier === undefined ? quarter : Math.min(earlier, quarter));
}
