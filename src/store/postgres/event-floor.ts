/**
 * The one condition every reader of the event log (events, event_terms) adds: seq at or above
 * retention's floor. Retention moves the floor and leaves the rows below it in their range
 * partition until the whole partition is dropped (event-retention.ts, event-partitions.ts), so a
 * read without it would return events retention has already removed.
 */
import type { Db } from './client.js';

/** `seq >= floor`, as a fragment of a query made with the same `db`. */
export function seqAboveFloor(db: Db) {
  return db`seq >= (SELECT floor FROM event_log_floor)`;
}
