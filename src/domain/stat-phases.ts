/**
 * A rollup plan's finer pieces (domain/stat-levels.ts) read by their phase in the UTC day, for an
 * engine with an index on it (PostgreSQL's stat_rollup_phase, migration 5).
 *
 * The pieces of a zone's edges sit at the same few times of every UTC day: the hours 19:00 to
 * 24:00 and the quarter hours 18:30 and 18:45 for every Asia/Kolkata day, one or two hours before
 * midnight for Europe/Berlin's, whichever half of the year. Read as one range per piece, a year
 * of Kolkata days was 732 index descents per channel (PostgreSQL: ~15 ms of the server's CPU);
 * read as one range per (grain, phase), it is 7, each over the span of the pieces that have that
 * phase. Such a range also holds records between the pieces (the 22:00 hour of a Berlin winter
 * day, when the summer's pieces have that phase): a record counts only where a piece of its own
 * grain holds it (the last piece starting at or before it, if it ends at or after it), and the
 * rest are dropped.
 */
import { QUARTERS_IN, type FineGrain, type RollupPlan } from './stat-levels.js';

/** Quarter hours in the UTC day the phases are taken in. */
const DAY_Q = QUARTERS_IN.d;

/** The records of one grain that start `phase` quarter hours into a UTC day, buckets from..to. */
export interface PhaseRead {
  phase: number;
  from: number;
  to: number;
}

/** One finer grain's phase reads and pieces (ascending, disjoint, in units of the grain). */
export interface GrainPhases {
  reads: PhaseRead[];
  froms: number[];
  tos: number[];
  edges: number[];
  signs: number[];
}

/**
 * The phase of a bucket of a grain finer than a day: the quarter hour of the UTC day it starts
 * at. The same arithmetic as the indexes' expressions (PostgreSQL's % keeps the dividend's sign,
 * as here).
 */
export function phaseOf(grain: FineGrain, bucket: number): number {
  return (bucket * QUARTERS_IN[grain]) % DAY_Q;
}

/** The plan's pieces of each finer grain as phase reads, with what places their records. */
export function phaseReads(plan: RollupPlan): Record<FineGrain, GrainPhases> {
  return { s: grainPhases(plan, 's'), h: grainPhases(plan, 'h'), q: grainPhases(plan, 'q') };
}

function grainPhases(plan: RollupPlan, grain: FineGrain): GrainPhases {
  const pieces = plan.pieces[grain];
  const byPhase = new Map<number, PhaseRead>();
  for (const p of pieces) {
    for (let b = p.from; b <= p.to; b++) {
      const phase = phaseOf(grain, b);
      const r = byPhase.get(phase);
      if (!r) byPhase.set(phase, { phase, from: b, to: b });
      else {
        r.from = Math.min(r.from, b);
        r.to = Math.max(r.to, b);
      }
    }
  }
  return {
    reads: [...byPhase.values()].sort((x, y) => x.phase - y.phase),
    froms: pieces.map((p) => p.from),
    tos: pieces.map((p) => p.to),
    edges: pieces.map((p) => p.edge),
    signs: pieces.map((p) => p.sign),
  };
}
