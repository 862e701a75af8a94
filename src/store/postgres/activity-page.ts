/**
 * One page of a filtered walk and its total count (activity-plan.ts: the lead, the residual and
 * why a LIMIT bounds the cost). Both run on the caller's snapshot (repos/events.ts opens one
 * REPEATABLE READ READ ONLY transaction per page), so a page and its count agree.
 */
import type { EventRecord } from '../../domain/types.js';
import type { ActivityFilter, ActivityPage, PageOptions } from '../port/events.js';
import type { Db } from './client.js';
import { COUNT_WALK, COUNT_WALK_LEAD_ONLY, leadSeqs, needsRow, PAGE_WALK, residual, type Scope, type Window } from './activity-plan.js';

export type PageOfEvents = Omit<ActivityPage, 'totalCount' | 'totalCountExact'>;

/**
 * The matches past the cursor in the page's order, at most `limit`, walking at most `walk`
 * candidates. The candidates come from the lead in seq order and are probed one by one (a
 * nested loop over the ordered subquery), so a page of a filter most events match stops after
 * `limit` probes. When fewer than `limit` matched, a second statement tells whether the walk ran
 * out of budget (partial: `after` is the last candidate examined) or out of candidates.
 */
export async function pageOf(db: Db, f: ActivityFilter, opts: PageOptions, scope: Scope, walk = PAGE_WALK): Promise<PageOfEvents> {
  const desc = opts.order === 'desc';
  const w: Window = desc
    ? { gt: scope.lo - 1, lt: opts.afterSeq > 0 ? Math.min(scope.hi, opts.afterSeq) : scope.hi, desc }
    : { gt: Math.max(opts.afterSeq, scope.lo - 1), lt: scope.hi, desc };
  if (w.gt + 1 >= w.lt || opts.limit <= 0) return { results: [], after: opts.afterSeq, partial: false };
  const dir = desc ? db`DESC` : db`ASC`;
  const rows = await db<{ doc: EventRecord }[]>`
    SELECT e.doc FROM (${leadSeqs(db, f, w, walk)}) c JOIN events e ON e.seq = c.seq
    WHERE ${residual(db, f, scope)}
    ORDER BY c.seq ${dir} LIMIT ${opts.limit}`;
  const results = rows.map((r) => r.doc);
  const lastReturned = results.length > 0 ? results[results.length - 1].seq : opts.afterSeq;
  if (results.length >= opts.limit) return { results, after: lastReturned, partial: false };
  const [seen] = await db<{ n: number; reached: number | null }[]>`
    SELECT count(*)::int8 AS n, ${desc ? db`min(c.seq)` : db`max(c.seq)`} AS reached FROM (${leadSeqs(db, f, w, walk)}) c`;
  if (seen.n < walk || seen.reached === null) return { results, after: lastReturned, partial: false };
  // The budget ran out: continue past the last candidate examined (no match is skipped).
  return { results, after: seen.reached, partial: true };
}

/**
 * Every match of the filter in [lo, hi): exact when the lead has at most the walk's budget of
 * candidates, else extrapolated from the part walked (the share of the seq range it covered).
 * A filter that is its lead alone is counted on the index alone, with a larger budget.
 */
export async function countOf(db: Db, f: ActivityFilter, scope: Scope): Promise<{ count: number; exact: boolean }> {
  if (scope.lo >= scope.hi) return { count: 0, exact: true };
  const w: Window = { gt: scope.lo - 1, lt: scope.hi, desc: false };
  const rowChecked = needsRow(f, scope);
  const walk = rowChecked ? COUNT_WALK : COUNT_WALK_LEAD_ONLY;
  const [r] = rowChecked
    ? await db<{ walked: number; reached: number | null; n: number }[]>`
        SELECT count(*)::int8 AS walked, max(c.seq) AS reached, (count(*) FILTER (WHERE ${residual(db, f, scope)}))::int8 AS n
        FROM (${leadSeqs(db, f, w, walk)}) c JOIN events e ON e.seq = c.seq`
    : await db<{ walked: number; reached: number | null; n: number }[]>`
        SELECT count(*)::int8 AS walked, max(c.seq) AS reached, count(*)::int8 AS n FROM (${leadSeqs(db, f, w, walk)}) c`;
  if (r.walked < walk || r.reached === null) return { count: r.n, exact: true };
  const covered = Math.max(1, r.reached - scope.lo + 1);
  return { count: Math.round((r.n * (scope.hi - scope.lo)) / covered), exact: false };
}
