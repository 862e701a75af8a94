/**
 * Node heartbeats (issue 32: "a dead node's leases are taken over within 60 s"). Every running
 * node writes its row every HEARTBEAT_EVERY_MS; a clean stop deletes it. A node whose row has
 * not moved for the stale time died (or lost the database, which for the cluster is the same:
 * its late writes are refused by the queue's lease fencing), and the other nodes take its queue
 * leases back at once (delivery's recovery), instead of waiting out the 30-minute lease.
 *
 * A node judges the others only after beating itself without a break for the stale time
 * (BeatRun): while the database was out of its reach it was most likely out of theirs too, and
 * their rows are as old as the outage. The first node back used to take every other node's
 * leases at once, after any outage longer than the stale time, and the messages those nodes had
 * delivered meanwhile, their outcomes waiting to be recorded, went out a second time.
 *
 * Times on the database's clock (time.ts), so nodes whose clocks disagree still agree on who
 * is gone. Rows of nodes gone for a week are removed by the beat itself: a node id that never
 * comes back is not listed forever.
 */
import type { Sql } from './connection.js';
import type { CoordinationTime } from './time.js';

export const HEARTBEAT_EVERY_MS = 5_000;
const FORGOTTEN_AFTER_MS = 7 * 24 * 3_600_000;

export const HEARTBEATS_TABLE = `
CREATE TABLE IF NOT EXISTS coord_nodes (
  node_id text PRIMARY KEY,
  run text NOT NULL,
  started_at_ms float8 NOT NULL,
  heartbeat_at_ms float8 NOT NULL
);
CREATE INDEX IF NOT EXISTS coord_nodes_heartbeat ON coord_nodes (heartbeat_at_ms);
`;

export async function beat(sql: Sql, nodeId: string, run: string, time: CoordinationTime): Promise<void> {
  const now = time.query();
  await sql`
    INSERT INTO coord_nodes AS n (node_id, run, started_at_ms, heartbeat_at_ms)
    VALUES (${nodeId}, ${run}, coord_now(${now}::float8), coord_now(${now}::float8))
    ON CONFLICT (node_id) DO UPDATE SET heartbeat_at_ms = excluded.heartbeat_at_ms, run = excluded.run,
      started_at_ms = CASE WHEN n.run = excluded.run THEN n.started_at_ms ELSE excluded.started_at_ms END`;
  await sql`DELETE FROM coord_nodes WHERE heartbeat_at_ms < coord_now(${now}::float8) - ${FORGOTTEN_AFTER_MS}::float8`;
}

/** A clean stop: this run's row goes, so nobody takes it for dead. */
export async function forget(sql: Sql, nodeId: string, run: string): Promise<void> {
  await sql`DELETE FROM coord_nodes WHERE node_id = ${nodeId} AND run = ${run}`;
}

/** Nodes whose last heartbeat is older than staleMs, this one excepted. */
export async function goneNodes(sql: Sql, self: string, staleMs: number, time: CoordinationTime): Promise<string[]> {
  const rows = await sql<{ node_id: string }[]>`
    SELECT node_id FROM coord_nodes
    WHERE heartbeat_at_ms < coord_now(${time.query()}::float8) - ${staleMs}::float8 AND node_id <> ${self}
    ORDER BY node_id`;
  return rows.map((r) => r.node_id);
}

/** A gap between two beats longer than this breaks the run (a beat that hung on a database out of reach). */
export const BEAT_GAP_MS = 2 * HEARTBEAT_EVERY_MS;

/**
 * Since when this node's beats have landed without a break: a failed beat, or one that landed
 * more than BEAT_GAP_MS after the one before, starts the run again. Local monotonic time.
 */
export class BeatRun {
  private since: number | undefined;
  private last = 0;

  constructor(private readonly now: () => number) {}

  /** Follows one beat; its failure is passed on. */
  async track(beat: Promise<void>): Promise<void> {
    try {
      await beat;
    } catch (err) {
      this.since = undefined;
      throw err;
    }
    const at = this.now();
    if (this.since === undefined || at - this.last > BEAT_GAP_MS) this.since = at;
    this.last = Math.max(this.last, at);
  }

  /** Whether the beats have landed without a break for at least ms, up to now. */
  unbrokenFor(ms: number): boolean {
    const at = this.now();
    return this.since !== undefined && at - this.since >= ms && at - this.last <= BEAT_GAP_MS;
  }
}
