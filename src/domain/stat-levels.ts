/**
 * The coarser statistics counter levels (issue 36) and how a series is composed from them.
 *
 * Beside the quarter-hour counters every engine keeps, per account and channel and also for the
 * whole account (channel ''), a rollup of the untagged counters per UTC quarter hour ('q'), UTC
 * hour ('h') and UTC day ('d'), both mail types in one record (a RollupVector). A zone's hour or
 * day does not always fall on a UTC hour (Asia/Kolkata +05:30, Asia/Kathmandu +05:45), so a bucket
 * is read as: its coarse records between the coarse boundaries nearest to its edges, plus or minus
 * the finer records between each edge and that boundary. For bucket i, with M(e) the boundary
 * nearest to edge e and W(e) the counters in [e, M(e)) (negative when M(e) comes first):
 *
 *   sum[eᵢ, eᵢ₊₁) = W(eᵢ) + coarse[M(eᵢ), M(eᵢ₊₁)) − W(eᵢ₊₁)
 *
 * which holds for any bucket length. W(e) is read as a chain through the levels the engine keeps
 * between the quarter hour and the coarse grain: with m_g(e) the boundary of grain g nearest to
 * e, W(e) = [e, m_h) in quarter hours + [m_h, m_s) in hours + [m_s, m_d) in six hours, each
 * interval signed by its direction (it telescopes to [e, m_d)). With hours alone (LMDB), an edge
 * reads at most 2 quarter hours and 12 hours; with the six-hour level ('s', PostgreSQL) at most
 * 2 quarter hours, 3 hours and 2 six hours, whatever the zone: a year of Asia/Kolkata days reads
 * 366 day records and 3 finer ones per edge instead of 7, Pacific/Auckland's 2 or 3 instead of
 * 12 or 11 (bench/RESULTS.md). 744 Kolkata hours read the quarter hours of the month once (their
 * pieces would cover it: rollupPlan), instead of 96 or 4 records per bucket per channel and mail
 * type.
 */
import type { MailType } from './types.js';
import type { StatCounters, StatTotals } from './wire.js';

export type RollupGrain = 'q' | 'h' | 's' | 'd';

/** The grains finer than a day that a plan may read at an edge. */
export type FineGrain = 'q' | 'h' | 's';

/** The levels an engine keeps between the quarter hour and the day: hours, and six hours on PostgreSQL. */
export type EdgeLevels = readonly ('h' | 's')[];

/** Quarter hours per unit of each grain ('s': six hours, starting at 00:00, 06:00, 12:00, 18:00 UTC). */
export const QUARTERS_IN: Record<RollupGrain, number> = { q: 1, h: 4, s: 24, d: 96 };

/** The grains finer than a day, finest first. */
export const FINE_GRAINS: readonly FineGrain[] = ['q', 'h', 's'];

/** The order of the counters in a RollupVector: transactional's seven, then broadcast's. */
export const COUNTER_NAMES = ['sent', 'delivered', 'opened', 'clicked', 'bounced', 'unsubscribed', 'complained'] as const satisfies readonly (keyof StatCounters)[];
const OFFSET: Record<MailType, number> = { transactional: 0, broadcast: COUNTER_NAMES.length };
const INDEX = Object.fromEntries(COUNTER_NAMES.map((name, k) => [name, k])) as Record<keyof StatCounters, number>;
const WIDTH = 2 * COUNTER_NAMES.length;

/** Both mail types' counters of one rollup record, 14 numbers. */
export type RollupVector = number[];

export function zeroVector(): RollupVector {
  return new Array<number>(WIDTH).fill(0);
}

/** Adds `by` to one counter of one mail type. */
export function bumpVector(v: RollupVector, mailType: MailType, name: keyof StatCounters, by: number): void {
  v[OFFSET[mailType] + INDEX[name]] += by;
}

/** Adds one mail type's StatCounters into a vector (times sign). */
export function addCountersToVector(v: RollupVector, mailType: MailType, c: Partial<StatCounters>, sign = 1): void {
  const at = OFFSET[mailType];
  COUNTER_NAMES.forEach((name, k) => (v[at + k] += sign * (c[name] ?? 0)));
}

export function addVector(into: RollupVector, v: readonly number[], sign = 1): void {
  for (let k = 0; k < WIDTH; k++) into[k] += sign * (v[k] ?? 0);
}

/** Sums of rollup vectors per bucket, kept as vectors while a series is read (plain number adds). */
export class VectorSums {
  private readonly sums: Float64Array;

  constructor(readonly buckets: number) {
    this.sums = new Float64Array(buckets * WIDTH);
  }

  add(i: number, v: readonly number[], sign: number): void {
    const at = i * WIDTH;
    for (let k = 0; k < WIDTH; k++) this.sums[at + k] += sign * (v[k] ?? 0);
  }

  /** One mail type's counters into bucket i (an engine whose rows hold one mail type each). */
  addCounters(i: number, mailType: MailType, c: Partial<StatCounters>, sign: number): void {
    const at = i * WIDTH + OFFSET[mailType];
    for (let k = 0; k < COUNTER_NAMES.length; k++) this.sums[at + k] += sign * (c[COUNTER_NAMES[k]] ?? 0);
  }

  totals(): StatTotals[] {
    return Array.from({ length: this.buckets }, (_, i) => {
      const out: StatTotals = { transactional: zeroCountersOf(), broadcast: zeroCountersOf() };
      for (const mailType of ['transactional', 'broadcast'] as const) {
        const at = i * WIDTH + OFFSET[mailType];
        COUNTER_NAMES.forEach((name, k) => (out[mailType][name] = this.sums[at + k]));
      }
      return out;
    });
  }
}

function zeroCountersOf(): StatCounters {
  return { sent: 0, delivered: 0, opened: 0, clicked: 0, bounced: 0, unsubscribed: 0, complained: 0 };
}

/** A range of buckets of one grain to read, inclusive. */
export interface RollupRead {
  grain: RollupGrain;
  from: number;
  to: number;
}

/** A read with where its records count: a finer piece's edge and sign, or edge −1 for coarse records (placed by the marks). */
export interface PlacedRead extends RollupRead {
  edge: number;
  sign: 1 | -1;
}

/** A finer range between an edge and its coarse boundary: +sign into bucket `edge`, −sign into bucket `edge − 1`. */
type Piece = PlacedRead;

/** What a series reads (its finer pieces merged into few walks), and where each record counts (placedReads). */
export interface RollupPlan {
  buckets: number;
  reads: RollupRead[];
  coarse: RollupGrain;
  /** M(eᵢ) in units of the coarse grain. */
  marks: number[];
  /** Per finer grain, ascending and disjoint. */
  pieces: Record<FineGrain, Piece[]>;
}

/** Pieces of one grain closer than this many records are read in one walk (a walk costs more than a few records). */
const MERGE_GAP = 8;

/**
 * The plan for buckets [edgesQ[i], edgesQ[i + 1]) given in quarter hours, read on `coarse`
 * records plus finer ones at the edges, through the `levels` the engine keeps (LMDB: hours;
 * PostgreSQL: hours and six hours). Every bucket must be at least half a coarse unit long
 * (coarseFor), so the finer pieces of different edges never overlap.
 */
export function rollupPlan(edgesQ: readonly number[], coarse: RollupGrain, levels: EdgeLevels = ['h']): RollupPlan {
  const plan = planOn(edgesQ, coarse, levels);
  // Hours starting at :30 or :45: the quarter hours near the edges merge into one walk over the
  // whole span, which then reads every quarter hour anyway; the coarse records only add to it.
  const q = plan.reads.find((r) => r.grain === 'q');
  if (coarse !== 'q' && q && q.from <= edgesQ[0] && q.to >= edgesQ[edgesQ.length - 1] - 1) return planOn(edgesQ, 'q', levels);
  return plan;
}

/**
 * The plan's records as reads that each carry their placement, for an engine that places them
 * where it reads them (PostgreSQL sums per bucket in the statement): the coarse range, then every
 * finer piece on its own (not merged).
 */
export function placedReads(plan: RollupPlan): PlacedRead[] {
  const coarse: PlacedRead[] = plan.reads.filter((r) => r.grain === plan.coarse).map((r) => ({ ...r, edge: -1, sign: 1 }));
  return coarse.concat(plan.pieces.s, plan.pieces.h, plan.pieces.q);
}

function planOn(edgesQ: readonly number[], coarse: RollupGrain, levels: EdgeLevels): RollupPlan {
  const unit = QUARTERS_IN[coarse];
  const marks = edgesQ.map((e) => Math.round(e / unit));
  const chain = chainOf(coarse, levels);
  const pieces: Piece[] = [];
  for (let i = 0; i < edgesQ.length; i++) edgePieces(pieces, i, edgesQ[i], marks[i] * unit, chain);
  const reads: RollupRead[] = [];
  const first = marks[0];
  const last = marks[marks.length - 1];
  if (last > first) reads.push({ grain: coarse, from: first, to: last - 1 });
  const byGrain: Record<FineGrain, Piece[]> = { q: [], h: [], s: [] };
  for (const p of pieces) byGrain[p.grain as FineGrain].push(p);
  for (const grain of FINE_GRAINS) byGrain[grain].sort((x, y) => x.from - y.from);
  for (const grain of ['s', 'h', 'q'] as const) reads.push(...mergedReads(byGrain[grain]));
  return { buckets: Math.max(0, edgesQ.length - 1), reads, coarse, marks, pieces: byGrain };
}

/** The boundaries an edge goes through to its coarse mark: the kept levels finer than `coarse`, finest first, then `coarse`. */
function chainOf(coarse: RollupGrain, levels: EdgeLevels): RollupGrain[] {
  const finer = (['h', 's'] as const).filter((g) => levels.includes(g) && QUARTERS_IN[g] < QUARTERS_IN[coarse]);
  return [...finer, coarse];
}

/**
 * [e, m) as the chain's signed intervals (e and m in quarter hours, m the coarse boundary nearest
 * to e): from e to b₁ in quarter hours, from b₁ to b₂ in units of the chain's first grain, and so
 * on to m, where bₖ is the boundary of the chain's k-th grain nearest to e, a tie going toward
 * the next one (Asia/Kolkata's 18:30 goes to 18:00, the six hours' boundary, not to 19:00). Each
 * boundary is a multiple of the grain before it, so every interval is whole records of its grain.
 */
function edgePieces(out: Piece[], edge: number, e: number, m: number, chain: readonly RollupGrain[]): void {
  const bounds = new Array<number>(chain.length);
  bounds[chain.length - 1] = m;
  for (let k = chain.length - 2; k >= 0; k--) bounds[k] = nearest(e, QUARTERS_IN[chain[k]], bounds[k + 1]);
  let at = e;
  let grain: FineGrain = 'q';
  for (let k = 0; k < chain.length; k++) {
    const next = bounds[k];
    if (next !== at) {
      const size = QUARTERS_IN[grain];
      const lo = Math.min(at, next);
      const hi = Math.max(at, next);
      // A literal with every field (no spread): V8 keeps one shape for all pieces.
      out.push({ grain, from: lo / size, to: hi / size - 1, edge, sign: at < next ? 1 : -1 });
    }
    at = next;
    grain = chain[k] as FineGrain;
  }
}

/** The multiple of `step` nearest to e; halfway, the one on the side of `toward`. */
function nearest(e: number, step: number, toward: number): number {
  const lo = Math.floor(e / step) * step;
  const hi = lo + step;
  if (e - lo !== hi - e) return e - lo < hi - e ? lo : hi;
  return toward > e ? hi : lo;
}

/**
 * The grain a series is read on, at most `max`: days when no bucket is shorter than half a day (a
 * 23-hour day too), hours when none is shorter than an hour, else quarter hours. Buckets at least
 * half a coarse unit long keep the pieces of different edges apart (rollupPlan).
 */
export function coarseFor(edgesQ: readonly number[], max: RollupGrain): RollupGrain {
  let shortest = Infinity;
  for (let i = 1; i < edgesQ.length; i++) shortest = Math.min(shortest, edgesQ[i] - edgesQ[i - 1]);
  if (max === 'd' && shortest >= QUARTERS_IN.d / 2) return 'd';
  return shortest >= QUARTERS_IN.h ? 'h' : 'q';
}

function mergedReads(pieces: readonly Piece[]): RollupRead[] {
  const out: RollupRead[] = [];
  for (const p of pieces) {
    const prev = out[out.length - 1];
    if (prev && p.from - prev.to <= MERGE_GAP) prev.to = Math.max(prev.to, p.to);
    else out.push({ grain: p.grain, from: p.from, to: p.to });
  }
  return out;
}
