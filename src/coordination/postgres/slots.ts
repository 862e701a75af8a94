/**
 * Counted slots per key in PostgreSQL (port.ts, Slots): one row per (name, key) in coord_slots
 * whose `holds` maps each hold's id to its expiry (a sorted-set member per hold, as KumoMTA's
 * shared connection limits). acquire() is one INSERT ... ON CONFLICT DO UPDATE ... WHERE fewer
 * than `limit` holds are live: the key's row is locked and the count read from its latest
 * version, so of racing acquirers on every node at most limit - held succeed; expired holds are
 * dropped on the way.
 *
 * A hold expires HOLD_TTL_MS after its last renewal: the holder renews all its holds together
 * every third of that (renewAll, on a timer), so the holds of a node that crashed run out
 * instead of taking the site's slots for good. A hold lost anyway (the node stalled past the
 * ttl and others took its place) does not stop its holder's session: the limit may be passed by
 * that one session until it ends.
 *
 * A hold whose release failed (PostgreSQL out of reach), or whose acquire failed without an
 * answer (the INSERT may have committed before the connection broke), is owed: its id is kept
 * and given back at the next try (releaseOwed, on a timer) instead of waiting out its ttl. A
 * short outage otherwise left every session of a site held for a minute on the whole cluster
 * (the cluster test: three releases failed during a 3 s crash, delivery.perDomainConcurrency 3,
 * and the cluster sent nothing to the site for 60 s). Releasing an id that is not there is a
 * no-op, so an acquire that did not commit costs one statement.
 */
import { randomUUID } from 'node:crypto';
import type { SlotHold, Slots } from '../port.js';
import type { Sql } from './connection.js';
import type { CoordinationTime } from './time.js';

export const HOLD_TTL_MS = 60_000;
/** How often owed holds are tried again: PostgreSQL's pools reconnect within a second (domain/database-unavailable.ts). */
export const OWED_RETRY_MS = 1_000;

/** This node's live holds, renewed together (one per slots name). */
export type HoldRegistry = Map<string, { name: string; key: string }>;

/** Holds this node gave up but could not (or may not) have removed yet, by id, with when they became owed (local ms). */
export type OwedReleases = Map<string, number>;

export class PgSlots implements Slots {
  constructor(
    private readonly sql: Sql,
    private readonly name: string,
    private readonly holds: HoldRegistry,
    private readonly owed: OwedReleases,
    private readonly time: CoordinationTime,
  ) {}

  async acquire(key: string, limit: number): Promise<SlotHold | null> {
    if (!(limit >= 1)) return null;
    const id = randomUUID();
    const rows = await this.insert(id, key, limit).catch((err: unknown) => {
      this.owed.set(id, this.time.local());
      throw err;
    });
    if (rows.length === 0) return null;
    this.holds.set(id, { name: this.name, key });
    return this.hold(key, id);
  }

  private insert(id: string, key: string, limit: number) {
    const now = this.time.query();
    return this.sql`
      INSERT INTO coord_slots AS s (name, key, holds, expires_at_ms)
      VALUES (${this.name}, ${key}, jsonb_build_object(${id}::text, coord_now(${now}::float8) + ${HOLD_TTL_MS}::float8), coord_now(${now}::float8) + ${HOLD_TTL_MS}::float8)
      ON CONFLICT (name, key) DO UPDATE SET
        holds = coalesce((SELECT jsonb_object_agg(e.key, e.value) FROM jsonb_each(s.holds) e WHERE (e.value)::float8 > coord_now(${now}::float8)), '{}'::jsonb)
                || jsonb_build_object(${id}::text, coord_now(${now}::float8) + ${HOLD_TTL_MS}::float8),
        expires_at_ms = greatest(s.expires_at_ms, coord_now(${now}::float8) + ${HOLD_TTL_MS}::float8)
      WHERE (SELECT count(*) FROM jsonb_each(s.holds) e WHERE (e.value)::float8 > coord_now(${now}::float8)) < ${limit}::float8
      RETURNING 1`;
  }

  async held(key: string): Promise<number> {
    const [row] = await this.sql<{ n: number }[]>`
      SELECT count(*)::int4 AS n FROM coord_slots s, jsonb_each(s.holds) e
      WHERE s.name = ${this.name} AND s.key = ${key} AND (e.value)::float8 > coord_now(${this.time.query()}::float8)`;
    return row?.n ?? 0;
  }

  private hold(key: string, id: string): SlotHold {
    let released = false;
    return {
      key,
      release: async () => {
        if (released) return;
        released = true;
        this.holds.delete(id);
        await this.sql`UPDATE coord_slots SET holds = holds - ${id}::text WHERE name = ${this.name} AND key = ${key}`.catch((err: unknown) => {
          this.owed.set(id, this.time.local());
          throw err;
        });
      },
    };
  }
}

/**
 * Extends every hold of `holds` by the ttl from now, in one statement: per key, the holds of
 * ours still in the row get the new expiry (one released or dropped meanwhile is not brought
 * back).
 */
export async function renewAll(sql: Sql, holds: HoldRegistry, time: CoordinationTime): Promise<void> {
  if (holds.size === 0) return;
  const ids = [...holds.keys()];
  const names = ids.map((id) => holds.get(id)!.name);
  const keys = ids.map((id) => holds.get(id)!.key);
  const now = time.query();
  await sql`
    UPDATE coord_slots s SET
      holds = (SELECT jsonb_object_agg(e.key, CASE WHEN e.key = ANY(mine.ids) THEN to_jsonb(coord_now(${now}::float8) + ${HOLD_TTL_MS}::float8) ELSE e.value END)
               FROM jsonb_each(s.holds) e),
      expires_at_ms = greatest(s.expires_at_ms, coord_now(${now}::float8) + ${HOLD_TTL_MS}::float8)
    FROM (SELECT h.name, h.key, array_agg(h.id) AS ids FROM unnest(${names}::text[], ${keys}::text[], ${ids}::text[]) AS h(name, key, id) GROUP BY h.name, h.key) mine
    WHERE s.name = mine.name AND s.key = mine.key AND s.holds ?| mine.ids`;
}

/**
 * Gives back the owed holds (see the header) in one statement; on failure they stay owed for
 * the next try, until their ttl has surely run out (then the database dropped them by itself,
 * and a long outage costs no statement a second).
 */
export async function releaseOwed(sql: Sql, owed: OwedReleases, time: CoordinationTime): Promise<void> {
  for (const [id, since] of owed) if (time.local() - since >= HOLD_TTL_MS) owed.delete(id);
  if (owed.size === 0) return;
  const ids = [...owed.keys()];
  await removeHolds(sql, ids);
  for (const id of ids) owed.delete(id);
}

/** Releases every hold of `holds` (the coordination stops), so the sites' slots are free at once. */
export async function releaseAll(sql: Sql, holds: HoldRegistry): Promise<void> {
  if (holds.size === 0) return;
  const ids = [...holds.keys()];
  holds.clear();
  await removeHolds(sql, ids);
}

/** Takes the holds `ids` out of whichever rows hold them, in one statement (an id no row holds is skipped). */
function removeHolds(sql: Sql, ids: string[]): Promise<unknown> {
  return sql`UPDATE coord_slots s SET holds = s.holds - ${ids}::text[] WHERE s.holds ?| ${ids}::text[]`;
}
