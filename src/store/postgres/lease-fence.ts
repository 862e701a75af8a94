/**
 * The verbs that end a lease without an attempt (store/port/queue.ts): release, discard and
 * recover. Fencing: a lease is the job's (lease_until, lease_owner, lease_generation) while its
 * state is 'leased'; release and discard act only on a row that still holds the caller's, in
 * one conditional statement (zero rows: the lease is no longer the caller's, nothing written).
 * Each such statement is atomic across nodes: the UPDATE/DELETE takes the row lock and, under
 * READ COMMITTED, re-checks its WHERE on the row's latest committed version, so of an outcome
 * and a release racing on one lease exactly one finds it.
 */
import type { LeasedJob } from '../port/queue.js';
import type { PgContext } from './context.js';
import { iso } from './queue-rows.js';

/** The fencing token of each leased job, as unnest() arrays. */
export function leaseTokens(jobs: readonly LeasedJob[]): { ids: string[]; owners: string[]; gens: number[]; untils: number[] } {
  return {
    ids: jobs.map((j) => j.id),
    owners: jobs.map((j) => j.leaseOwner),
    gens: jobs.map((j) => j.leaseGeneration),
    untils: jobs.map((j) => Date.parse(j.leaseUntil)),
  };
}

/** Gives the lease back without counting an attempt: due again at dueAtMs. One conditional UPDATE. */
export async function releaseLease(ctx: PgContext, job: LeasedJob, dueAtMs: number): Promise<boolean> {
  const rows = await ctx.sql`
    UPDATE jobs SET state = 'queued', due_at = ${dueAtMs}, lease_until = NULL, lease_owner = NULL,
      doc = (doc - 'leaseUntil') || jsonb_build_object('state', 'queued', 'dueAt', ${iso(dueAtMs)}::text)
    WHERE id = ${job.id} AND state = 'leased' AND lease_owner = ${job.leaseOwner}
      AND lease_generation = ${job.leaseGeneration} AND lease_until = ${Date.parse(job.leaseUntil)}
    RETURNING id`;
  return rows.length === 1;
}

/**
 * Leased jobs whose channel was deleted: removed without an attempt (no event, no bounce), as
 * the channel's purge removes them; those whose lease is no longer the caller's stay. One DELETE.
 */
export async function discardLeases(ctx: PgContext, jobs: readonly LeasedJob[]): Promise<number> {
  if (jobs.length === 0) return 0;
  const t = leaseTokens(jobs);
  const rows = await ctx.sql`
    DELETE FROM jobs j USING unnest(${t.ids}::text[], ${t.owners}::text[], ${t.gens}::int4[], ${t.untils}::int8[]) AS f(id, owner, gen, until_ms)
    WHERE j.id = f.id AND j.state = 'leased' AND j.lease_owner = f.owner AND j.lease_generation = f.gen AND j.lease_until = f.until_ms
    RETURNING j.id`;
  return rows.length;
}

/** Most leases one recover() takes back (as the LMDB engine's scan). */
const RECOVER_LIMIT = 10_000;

/**
 * Expired leases go back to due now; with `owner` (that node's start) also its own leases and
 * those that name no owner, whatever their expiry; `keep` spares the caller's. One transaction:
 * the candidates are locked (SKIP LOCKED: a lease whose outcome is being recorded right now is
 * that outcome's), filtered by `keep`, and put back by one UPDATE of the locked rows.
 */
export async function recoverLeases(ctx: PgContext, o: { nowMs: number; owner?: string; keep?: (jobId: string) => boolean }): Promise<number> {
  return ctx.begin(async (tx) => {
    const candidates = await tx<{ id: string }[]>`
      SELECT id FROM jobs
      WHERE state = 'leased' AND (lease_until <= ${o.nowMs}
        ${o.owner === undefined ? tx`` : tx`OR lease_owner IS NULL OR lease_owner = ${o.owner}`})
      ORDER BY lease_until, id
      LIMIT ${RECOVER_LIMIT}
      FOR UPDATE SKIP LOCKED`;
    const ids = candidates.map((r) => r.id).filter((id) => !o.keep?.(id));
    if (ids.length === 0) return 0;
    const rows = await tx`
      UPDATE jobs SET state = 'queued', due_at = ${o.nowMs}, lease_until = NULL, lease_owner = NULL,
        doc = (doc - 'leaseUntil') || jsonb_build_object('state', 'queued', 'dueAt', ${iso(o.nowMs)}::text)
      WHERE id = ANY(${ids}::text[]) AND state = 'leased'
      RETURNING id`;
    return rows.length;
  });
}
