import { describe, expect, it } from 'vitest';
import { SourceChooser } from '../../src/domain/source-chooser.js';

const pool = [
  { source: 'a', weight: 3 },
  { source: 'b', weight: 1 },
];

function counts(picks: Array<string | undefined>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const p of picks) out[String(p)] = (out[String(p)] ?? 0) + 1;
  return out;
}

describe('SourceChooser (smooth weighted round robin)', () => {
  it('spreads 3:1 as a a b a, and honours the weights exactly over every whole cycle', () => {
    const c = new SourceChooser();
    const picks = Array.from({ length: 4000 }, () => c.pick('tx', pool));
    expect(picks.slice(0, 8)).toEqual(['a', 'a', 'b', 'a', 'a', 'a', 'b', 'a']);
    expect(counts(picks)).toEqual({ a: 3000, b: 1000 });
  });

  it('honours uneven weights exactly over N picks, N a multiple of their sum', () => {
    const c = new SourceChooser();
    const members = [
      { source: 'x', weight: 5 },
      { source: 'y', weight: 2 },
      { source: 'z', weight: 7 },
    ];
    expect(counts(Array.from({ length: 14 * 100 }, () => c.pick('p', members)))).toEqual({ x: 500, y: 200, z: 700 });
  });

  it('keeps each pool its own sequence', () => {
    const c = new SourceChooser();
    expect([c.pick('tx', pool), c.pick('bulk', pool), c.pick('tx', pool), c.pick('tx', pool)]).toEqual(['a', 'a', 'a', 'b']);
  });

  it('skips an unavailable source, the others sharing its turns, and answers undefined when none is left', () => {
    const c = new SourceChooser();
    const members = [...pool, { source: 'c', weight: 1 }];
    const withoutA = Array.from({ length: 100 }, () => c.pick('p', members, (s) => s !== 'a'));
    expect(counts(withoutA)).toEqual({ b: 50, c: 50 });
    expect(c.pick('p', members, () => false)).toBeUndefined();
  });
});
