import { describe, expect, it } from 'vitest';
import { oncePerWindow } from '../../src/log/repeats.js';

describe('oncePerWindow', () => {
  it('writes the first of a burst, leaves out the rest of its window, and counts them in the next line', () => {
    let t = 1_000;
    const gate = oncePerWindow(10_000, () => t);
    const lines: number[] = [];
    const write = (leftOut: number) => lines.push(leftOut);
    gate(write);
    for (let i = 0; i < 5; i++) {
      t += 1_000;
      gate(write);
    }
    expect(lines).toEqual([0]);
    t = 11_000; // the window of the first line (1,000 + 10,000) has ended
    gate(write);
    expect(lines).toEqual([0, 5]);
    t += 9_999;
    gate(write);
    t += 1;
    gate(write);
    expect(lines).toEqual([0, 5, 1]);
  });
});
