/**
 * domain/stat-levels.ts: a series composed from day, hour and quarter-hour records equals the sum
 * of the quarter hours of each bucket, for random counts and edges of zones on whole hours, half
 * hours and quarter hours, days of 23 to 25 hours, and hours.
 */
import { describe, expect, it } from 'vitest';
import { coarseFor, FINE_GRAINS, placedReads, QUARTERS_IN, rollupPlan, type EdgeLevels, type RollupGrain } from '../../src/domain/stat-levels.js';
import { phaseOf, phaseReads, type GrainPhases } from '../../src/domain/stat-phases.js';

/** A random count per quarter hour over [0, span), and the rollup levels made of it. */
function levels(span: number, seed: number): Record<RollupGrain, Map<number, number>> {
  let x = seed;
  const rand = () => ((x = (x * 1103515245 + 12345) % 2147483648) / 2147483648);
  const out = { q: new Map<number, number>(), h: new Map<number, number>(), s: new Map<number, number>(), d: new Map<number, number>() };
  for (let q = 0; q < span; q++) {
    if (rand() < 0.3) continue;
    const n = Math.floor(rand() * 10);
    for (const g of ['q', 'h', 's', 'd'] as const) {
      const b = Math.floor(q / QUARTERS_IN[g]);
      out[g].set(b, (out[g].get(b) ?? 0) + n);
    }
  }
  return out;
}

/** A series through placedReads, placed as both engines do (width_bucket over the marks, or a piece's edge and sign). */
function composedPlaced(lv: Record<RollupGrain, Map<number, number>>, edges: number[], max: RollupGrain, kept: EdgeLevels = ['h']): number[] {
  const plan = rollupPlan(edges, coarseFor(edges, max), kept);
  const out = new Array<number>(plan.buckets).fill(0);
  const add = (i: number, n: number) => i >= 0 && i < plan.buckets && (out[i] += n);
  for (const r of placedReads(plan)) {
    for (let b = r.from; b <= r.to; b++) {
      const n = lv[r.grain].get(b) ?? 0;
      if (r.edge >= 0) {
        add(r.edge, r.sign * n);
        add(r.edge - 1, -r.sign * n);
      } else add(plan.marks.filter((m) => m <= b).length - 1, n);
    }
  }
  return out;
}

/** The last piece starting at or before b, if it also ends at or after it (PostgreSQL: width_bucket over the starts, then the end): −1 if none. */
function pieceOf(g: GrainPhases, b: number): number {
  const j = g.froms.filter((f) => f <= b).length - 1;
  return j >= 0 && b <= g.tos[j] ? j : -1;
}

/**
 * A series as the PostgreSQL engine reads it (stats-rollup-read.ts): the coarse range placed by
 * the marks, and the finer records read by phase (every record of the grain at that phase in the
 * read's range), each counted in the piece of its grain that holds it, or dropped.
 */
function composedByPhase(lv: Record<RollupGrain, Map<number, number>>, edges: number[], max: RollupGrain, kept: EdgeLevels = ['h']): number[] {
  const plan = rollupPlan(edges, coarseFor(edges, max), kept);
  const out = new Array<number>(plan.buckets).fill(0);
  const add = (i: number, n: number) => i >= 0 && i < plan.buckets && (out[i] += n);
  for (const r of plan.reads.filter((x) => x.grain === plan.coarse)) {
    for (let b = r.from; b <= r.to; b++) add(plan.marks.filter((m) => m <= b).length - 1, lv[r.grain].get(b) ?? 0);
  }
  const fine = phaseReads(plan);
  for (const grain of FINE_GRAINS) {
    for (const r of fine[grain].reads) {
      for (let b = r.from; b <= r.to; b++) {
        if (phaseOf(grain, b) !== r.phase) continue;
        const j = pieceOf(fine[grain], b);
        if (j < 0) continue;
        const n = fine[grain].signs[j] * (lv[grain].get(b) ?? 0);
        add(fine[grain].edges[j], n);
        add(fine[grain].edges[j] - 1, -n);
      }
    }
  }
  return out;
}

function direct(lv: Record<RollupGrain, Map<number, number>>, edges: number[]): number[] {
  return edges.slice(1).map((to, i) => {
    let sum = 0;
    for (let q = edges[i]; q < to; q++) sum += lv.q.get(q) ?? 0;
    return sum;
  });
}

const DAY = 96;
const SPAN = 40 * DAY;

/** 200 random ascending edge lists: every other one with buckets up to 3 days long, the rest up to 12 quarter hours. */
function randomEdgeSets(seed: number): number[][] {
  let x = seed;
  const rand = (n: number) => (x = (x * 48271) % 2147483647) % n;
  return Array.from({ length: 200 }, (_, round) => {
    const edges = [DAY + rand(DAY)];
    const count = 1 + rand(20);
    for (let i = 0; i < count; i++) edges.push(edges[edges.length - 1] + 1 + rand(round % 2 === 0 ? 3 * DAY : 12));
    return edges;
  });
}

describe('rollup composition', () => {
  const lv = levels(SPAN, 7);
  it.each([
    ['UTC days', 0],
    ['Asia/Kolkata days (+05:30)', -22],
    ['Asia/Kathmandu days (+05:45)', -23],
    ['America/St_Johns days (-03:30)', 14],
    ['Pacific/Kiritimati days (+14:00)', -56],
  ])('composes %s', (_name, offset) => {
    const edges = Array.from({ length: 30 }, (_, i) => 2 * DAY + i * DAY + offset);
    expect(composedPlaced(lv, edges, 'd')).toEqual(direct(lv, edges));
    expect(rollupPlan(edges, 'd').reads.filter((r) => r.grain === 'd')).toHaveLength(1);
  });

  it('composes days of 23, 24 and 25 hours', () => {
    const edges = [3 * DAY - 8, 4 * DAY - 8, 5 * DAY - 12, 6 * DAY - 8, 7 * DAY - 8];
    expect(composedPlaced(lv, edges, 'd')).toEqual(direct(lv, edges));
  });

  it.each([0, 1, 2, 3])('composes hours starting %i quarter hours after a UTC hour', (offset) => {
    const edges = Array.from({ length: 745 }, (_, i) => 3 * DAY + 4 * i + offset);
    expect(composedPlaced(lv, edges, 'h')).toEqual(direct(lv, edges));
    // Off the hour, the quarter hours near the edges would cover the month: they are read alone, once.
    expect(rollupPlan(edges, 'h').reads).toEqual(offset === 0 ? [{ grain: 'h', from: edges[0] / 4, to: edges[744] / 4 - 1 }] : [{ grain: 'q', from: edges[0], to: edges[744] - 1 }]);
  });

  it('composes Kolkata and Kathmandu days through placed reads', () => {
    for (const offset of [-22, -23, 14]) {
      const edges = Array.from({ length: 30 }, (_, i) => 2 * DAY + i * DAY + offset);
      expect(composedPlaced(lv, edges, 'd')).toEqual(direct(lv, edges));
      expect(placedReads(rollupPlan(edges, 'd')).filter((r) => r.edge < 0)).toEqual([{ grain: 'd', from: 2, to: 30, edge: -1, sign: 1 }]);
    }
  });

  it('composes random edges at every grain', () => {
    for (const edges of randomEdgeSets(3)) {
      for (const max of ['d', 'h'] as const) expect(composedPlaced(lv, edges, max)).toEqual(direct(lv, edges));
    }
  });

  it('composes by phase (PostgreSQL) random edges at every grain', () => {
    for (const edges of randomEdgeSets(11)) {
      for (const max of ['d', 'h'] as const) expect(composedByPhase(lv, edges, max)).toEqual(direct(lv, edges));
    }
  });

  it('reads a year of Kolkata days in one range per phase: 5 hours and 2 quarter hours', () => {
    const edges = Array.from({ length: 367 }, (_, i) => 2 * DAY + i * DAY - 22);
    const fine = phaseReads(rollupPlan(edges, 'd'));
    expect(fine.h.reads.map((r) => r.phase)).toEqual([76, 80, 84, 88, 92]);
    expect(fine.q.reads.map((r) => r.phase)).toEqual([74, 75]);
    expect(fine.h.froms).toHaveLength(367);
  });

  it('drops what a phase range holds between the pieces: days whose edge moves an hour (summer time) and half an hour off', () => {
    // St. John's (-03:30 in winter, -02:30 in summer): the edge is 03:30 UTC or 02:30 UTC, so the
    // summer days' quarter-hour piece starts at 02:00, an hour the winter days read as an hour
    // record at the same phase. Every mix of the two must still compose exactly.
    const lv2 = levels(SPAN, 13);
    const kinds = [14, 10];
    for (let mask = 0; mask < 64; mask++) {
      const edges = Array.from({ length: 7 }, (_, i) => (2 + i) * DAY + kinds[(mask >> (i % 6)) & 1]);
      expect(composedByPhase(lv2, edges, 'd')).toEqual(direct(lv2, edges));
    }
    const mixed = phaseReads(rollupPlan([2 * DAY + 14, 3 * DAY + 10, 4 * DAY + 14], 'd'));
    expect(mixed.h.reads.map((r) => r.phase)).toEqual([0, 4, 8]);
    expect(mixed.q.reads.map((r) => r.phase)).toEqual([8, 9, 12, 13]);
  });

  it('reads quarter hours only for buckets shorter than an hour', () => {
    expect(coarseFor([0, 1, 5], 'd')).toBe('q');
    expect(coarseFor([0, 4, 8], 'd')).toBe('h');
    expect(coarseFor([0, 92, 188], 'd')).toBe('d');
    expect(coarseFor([0, 96, 192], 'h')).toBe('h');
  });
});

describe('rollup composition with the six-hour level (PostgreSQL)', () => {
  const lv = levels(SPAN, 17);
  const KEPT: EdgeLevels = ['h', 's'];

  it.each([
    ['UTC', 0],
    ['Asia/Kolkata (+05:30)', -22],
    ['Asia/Kathmandu (+05:45)', -23],
    ['America/St_Johns (-03:30)', 14],
    ['America/Los_Angeles (-08:00)', 32],
    ['Pacific/Auckland (+12:00)', -48],
    ['Pacific/Auckland in summer (+13:00)', -52],
    ['Pacific/Chatham (+12:45)', -51],
    ['Pacific/Kiritimati (+14:00)', -56],
  ])('composes %s days, placed and by phase', (_name, offset) => {
    const edges = Array.from({ length: 30 }, (_, i) => 2 * DAY + i * DAY + offset);
    expect(composedPlaced(lv, edges, 'd', KEPT)).toEqual(direct(lv, edges));
    expect(composedByPhase(lv, edges, 'd', KEPT)).toEqual(direct(lv, edges));
  });

  it('composes random edges at every grain, placed and by phase', () => {
    for (const edges of [...randomEdgeSets(5), ...randomEdgeSets(19)]) {
      for (const max of ['d', 'h'] as const) {
        expect(composedPlaced(lv, edges, max, KEPT)).toEqual(direct(lv, edges));
        expect(composedByPhase(lv, edges, max, KEPT)).toEqual(direct(lv, edges));
      }
    }
  });

  it('composes every mix of days whose edge moves an hour (summer time), by phase', () => {
    for (const kinds of [[14, 10], [-52, -48], [-22, -26], [32, 28]]) {
      for (let mask = 0; mask < 64; mask++) {
        const edges = Array.from({ length: 7 }, (_, i) => (2 + i) * DAY + kinds[(mask >> (i % 6)) & 1]);
        expect(composedByPhase(lv, edges, 'd', KEPT)).toEqual(direct(lv, edges));
      }
    }
  });

  /** Finer records a year of days reads per edge, for a zone `offset` quarter hours from UTC (the edge at −offset). */
  const perEdge = (offset: number, kept: EdgeLevels) => {
    const edges = Array.from({ length: 367 }, (_, i) => 2 * DAY + i * DAY + offset);
    const plan = rollupPlan(edges, 'd', kept);
    return FINE_GRAINS.reduce((n, g) => n + plan.pieces[g].reduce((m, p) => m + p.to - p.from + 1, 0), 0) / edges.length;
  };

  it('reads at most 2 quarter hours, 3 hours and 2 six hours per edge, in any zone', () => {
    for (let offset = -56; offset <= 48; offset++) expect(perEdge(offset, KEPT)).toBeLessThanOrEqual(7);
    // Asia/Kolkata: the 18:00 six hours less the quarter hours 18:00 and 18:15; hours alone, 5 hours and 2 quarter hours.
    expect(perEdge(-22, KEPT)).toBe(3);
    expect(perEdge(-22, ['h'])).toBe(7);
    // Pacific/Auckland (+12): the 12:00 and 18:00 six hours, instead of 12 hours.
    expect(perEdge(-48, KEPT)).toBe(2);
    expect(perEdge(-48, ['h'])).toBe(12);
    const kolkata = phaseReads(rollupPlan(Array.from({ length: 367 }, (_, i) => 2 * DAY + i * DAY - 22), 'd', KEPT));
    expect(kolkata.s.reads.map((r) => r.phase)).toEqual([72]);
    expect(kolkata.h.reads).toEqual([]);
    expect(kolkata.q.reads.map((r) => r.phase)).toEqual([72, 73]);
  });

  it('leaves hourly series as they were: quarter hours at the edges only', () => {
    const edges = Array.from({ length: 745 }, (_, i) => 3 * DAY + 4 * i + 2);
    expect(rollupPlan(edges, 'h', KEPT)).toEqual(rollupPlan(edges, 'h'));
  });
});
