/**
 * One page of a filtered walk and its total count (activity-plan.ts: the lead, the residual and
 * why a LIMIT bounds the cost). Both run on the caller's snapshot (repos/events.ts opens one
 * REPEATABLE READ READ ONLY transaction per page), so a page and its count agree.
 *
 * A walk goes in STRETCHES: each statement examines at most a stretch of candidates past where
 * the last one stopped, and the stretches grow (×8) until the page is full, the candidates run
 * out or the budget is spent. A small first stretch lets PostgreSQL stream an ordered index
 * range (a page that most events match costs a few hundred probes); a large LIMIT would make it
 * read and sort every match instead (a bitmap scan), which is only cheap when they are few.
 */
import type { EventRecord } from '../../domain/types.js';
import type { ActivityFilter, ActivityPage, PageOptions } from '../port/events.js';
import type { Db } from './client.js';
import { COUNT_WALK, COUNT_WALK_LEAD_ONLY, leadSeqs, needsRow, PAGE_WALK, residual, type Scope, type Window } from './activity-plan.js';

export type PageOfEvents = Omit<ActivityPage, 'totalCount' | 'totalCountExact'>;

/** The first stretch of a page examines at least this many candidates (and twice its limit). */
const FIRST_STRETCH = 128;
/** Candidates per counting statement. */
const COUNT_STRETCH = 25_000;

interface Stretch {
  /** The matches, in walk order, at most `want`. */
  docs: EventRecord[];
  /** Candidates examined. */
  n: number;
  /** The last candidate examined (in walk order), null when none. */
  reached: number | null;
}

/** One statement: the stretch's candidates, how far they went, and the first `want` matches among them. */
async function stretch(db: Db, f: ActivityFilter, scope: Scope, w: Window, size: number, want: number): Promise<Stretch> {
  const dir = w.desc ? db`DESC` : db`ASC`;
  const [row] = await db<Stretch[]>`
    WITH c AS MATERIALIZED (${leadSeqs(db, f, w, size)})
    SELECT (SELECT count(*) FROM c)::int8 AS n, (SELECT ${w.desc ? db`min(seq)` : db`max(seq)`} FROM c) AS reached,
      coalesce((SELECT jsonb_agg(h.doc ORDER BY h.seq ${dir}) FROM (
        SELECT e.seq, e.doc FROM c JOIN events e ON e.seq = c.seq
        WHERE ${residual(db, f, scope)}
        ORDER BY e.seq ${dir} LIMIT ${want}) h), '[]'::jsonb) AS docs`;
  return row;
}

/** The window past the cursor, in the page's order, inside the filter's seq range. */
function windowOf(opts: PageOptions, scope: Scope): Window {
  const desc = opts.order === 'desc';
  return desc
    ? { gt: scope.lo - 1, lt: opts.afterSeq > 0 ? Math.min(scope.hi, opts.afterSeq) : scope.hi, desc }
    : { gt: Math.max(opts.afterSeq, scope.lo - 1), lt: scope.hi, desc };
}

/**
 * The matches past the cursor in the page's order, at most `limit`, examining at most `walk`
 * candidates. `partial`: the budget ran out first; `after` is then the last candidate examined,
 * so the next page goes on from there and no match is skipped.
 */
export async function pageOf(db: Db, f: ActivityFilter, opts: PageOptions, scope: Scope, walk = PAGE_WALK): Promise<PageOfEvents> {
  let w = windowOf(opts, scope);
  const results: EventRecord[] = [];
  const lastReturned = () => (results.length > 0 ? results[results.length - 1].seq : opts.afterSeq);
  let budget = walk;
  let size = Math.max(FIRST_STRETCH, opts.limit * 2);
  while (results.length < opts.limit && w.gt + 1 < w.lt) {
    const asked = Math.min(size, budget);
    const s = await stretch(db, f, scope, w, asked, opts.limit - results.length);
    results.push(...s.docs);
    budget -= s.n;
    if (results.length >= opts.limit || s.n < asked || s.reached === null) break;
    w = w.desc ? { ...w, lt: s.reached } : { ...w, gt: s.reached };
    if (budget <= 0) return { results, after: s.reached, partial: true };
    size *= 8;
  }
  return { results, after: lastReturned(), partial: false };
}

/** One counting statement: candidates examined, the last of them, and the matches among them. */
async function countStretch(db: Db, f: ActivityFilter, scope: Scope, w: Window, size: number, rowChecked: boolean) {
  const [r] = rowChecked
    ? await db<{ walked: number; reached: number | null; n: number }[]>`
        SELECT count(*)::int8 AS walked, max(c.seq) AS reached, (count(*) FILTER (WHERE ${residual(db, f, scope)}))::int8 AS n
        FROM (${leadSeqs(db, f, w, size)}) c JOIN events e ON e.seq = c.seq`
    : await db<{ walked: number; reached: number | null; n: number }[]>`
        SELECT count(*)::int8 AS walked, max(c.seq) AS reached, count(*)::int8 AS n FROM (${leadSeqs(db, f, w, size)}) c`;
  return r;
}

/**
 * Every match of the filter in [lo, hi): exact when the lead has at most the budget's candidates,
 * else extrapolated from the part walked (the share of the seq range it covered). A filter that
 * is its lead alone is counted on the index alone, with a larger budget.
 */
export async function countOf(db: Db, f: ActivityFilter, scope: Scope, budgets = { rows: COUNT_WALK, leadOnly: COUNT_WALK_LEAD_ONLY }): Promise<{ count: number; exact: boolean }> {
  const rowChecked = needsRow(f, scope);
  const budget = rowChecked ? budgets.rows : budgets.leadOnly;
  let w: Window = { gt: scope.lo - 1, lt: scope.hi, desc: false };
  let count = 0;
  let walked = 0;
  while (w.gt + 1 < w.lt) {
    const asked = Math.min(COUNT_STRETCH, budget - walked);
    const r = await countStretch(db, f, scope, w, asked, rowChecked);
    count += r.n;
    walked += r.walked;
    if (r.walked < asked || r.reached === null) break;
    if (walked >= budget) {
      const covered = Math.max(1, r.reached - scope.lo + 1);
      return { count: Math.round((count * (scope.hi - scope.lo)) / covered), exact: false };
    }
    w = { ...w, gt: r.reached };
  }
  return { count, exact: true };
}
