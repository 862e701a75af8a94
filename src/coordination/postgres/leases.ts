/**
 * Leases in PostgreSQL (port.ts, Lease): leadership of a task and ownership of a backlog's part,
 * one row per name (coord_leases: owner, generation, expires_at_ms).
 *
 * - Taking is one INSERT ... ON CONFLICT (name) DO UPDATE ... WHERE the row has expired,
 *   RETURNING: the conflicting row is locked and the WHERE is read on its latest version, so of
 *   racing callers on every node one inserts or takes over, and the others get no row (null).
 * - The generation comes from one sequence for every name (as leases.ts's one counter): it grows
 *   with each grant, also after a release deleted the row, and no two grants share one, so it is
 *   also the holder's token: two components of one node asking for one task get two
 *   generations, and only one of them a row.
 * - renew() and release() act only while the row still carries that generation: an UPDATE or
 *   DELETE ... WHERE generation = ours. A lease that expired but that nobody took is still ours
 *   and is renewed, as in memory.
 * - A restarted node takes back at once the leases its previous run held (port.ts: the node id
 *   is stable across restarts so that a restart takes back what the node held): a row of this
 *   node id written by another run (each coordination instance is one run, `run` a random id)
 *   is taken over as an expired one. One daemon runs per data folder (its lock), so that other
 *   run has ended; without this, a node restarted after a crash would wait out the ttl of its
 *   own leases (its unfinished messages' 'finishing' part among them).
 */
import { randomUUID } from 'node:crypto';
import type { Lease } from '../port.js';
import type { Sql } from './connection.js';
import type { CoordinationTime } from './time.js';

export class PgLeases {
  /** The leases this node holds now, released when it stops. */
  private readonly held = new Map<number, Lease>();
  private readonly run = randomUUID();

  constructor(
    private readonly sql: Sql,
    private readonly owner: string,
    private readonly time: CoordinationTime,
  ) {}

  async take(name: string, ttlMs: number): Promise<Lease | null> {
    if (!Number.isFinite(ttlMs) || ttlMs <= 0) throw new Error(`lease ttl must be positive, got ${ttlMs}`);
    const now = this.time.query();
    const rows = await this.sql<{ generation: number }[]>`
      INSERT INTO coord_leases AS l (name, owner, run, generation, expires_at_ms)
      VALUES (${name}, ${this.owner}, ${this.run}, nextval('coord_lease_generations'), coord_now(${now}::float8) + ${ttlMs}::float8)
      ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, run = excluded.run, generation = excluded.generation, expires_at_ms = excluded.expires_at_ms
      WHERE l.expires_at_ms <= coord_now(${now}::float8) OR (l.owner = excluded.owner AND l.run <> excluded.run)
      RETURNING generation`;
    const generation = rows[0]?.generation;
    return generation === undefined ? null : this.handle(name, generation, ttlMs);
  }

  /** Releases every lease this node still holds (the coordination stops). */
  async releaseAll(): Promise<void> {
    await Promise.all([...this.held.values()].map((l) => l.release()));
  }

  private handle(name: string, generation: number, ttlMs: number): Lease {
    const lease: Lease = {
      name,
      owner: this.owner,
      generation,
      renew: async () => {
        const rows = await this.sql`
          UPDATE coord_leases SET expires_at_ms = coord_now(${this.time.query()}::float8) + ${ttlMs}::float8
          WHERE name = ${name} AND generation = ${generation} RETURNING 1`;
        if (rows.length === 0) this.held.delete(generation);
        return rows.length > 0;
      },
      release: async () => {
        this.held.delete(generation);
        await this.sql`DELETE FROM coord_leases WHERE name = ${name} AND generation = ${generation}`;
      },
    };
    this.held.set(generation, lease);
    return lease;
  }
}
