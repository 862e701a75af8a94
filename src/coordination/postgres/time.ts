/**
 * Time for the PostgreSQL coordination. The shared rows (leases, rates, pacer, keyed limits,
 * failure windows, slot holds) hold times that every node compares, so they are written and
 * compared in one clock: the database's (statement_timestamp(), through coord_now() in
 * schema.ts), never a node's own, which may be off by seconds from the others' and would
 * expire their leases early or refill a budget twice. A node's own monotonic clock measures
 * only its local intervals: how long it keeps a reserved block, how long it waits before asking
 * the row again, when it renews its slot holds.
 *
 * Tests pass a fake clock instead (test/store-contract/coordinations.ts): its monotonic reading
 * is then given to every query as its now (coord_now(p) takes it over the database's), and
 * its timers drive the renewals, so a ttl runs out by clock.advance() without a sleep.
 */
import type { Clock, Timer } from '../../queue/clock.js';

export interface CoordinationTime {
  /** The `now` parameter of a query: null lets the database use its own clock. */
  query(): number | null;
  /** This node's monotonic milliseconds, for its own intervals. */
  local(): number;
  /** Calls fn once after ms of local time (unref'd: a coordination never keeps a process alive). */
  setTimer(fn: () => void, ms: number): Timer;
}

export function coordinationTime(clock?: Clock): CoordinationTime {
  if (clock) {
    return { query: () => clock.monotonic(), local: () => clock.monotonic(), setTimer: (fn, ms) => clock.setTimer(fn, ms) };
  }
  return {
    query: () => null,
    local: () => performance.now(),
    setTimer(fn, ms) {
      const t = setTimeout(fn, ms);
      t.unref();
      return { cancel: () => clearTimeout(t) };
    },
  };
}
