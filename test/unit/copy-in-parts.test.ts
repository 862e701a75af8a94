/**
 * domain/bytes.ts copyInParts: parts copied one after the other into one array from an offset,
 * with a pause (a yield) after each TURN_BYTES copied, a part larger than that cut across pauses.
 */
import { describe, expect, it } from 'vitest';
import { copyInParts, TURN_BYTES } from '../../src/domain/bytes.js';

function filled(size: number, seed: number): Uint8Array {
  const b = new Uint8Array(size);
  for (let i = 0; i < size; i++) b[i] = (i * seed + 1) & 0xff;
  return b;
}

describe('copyInParts', () => {
  it('copies every part in order from the offset, pausing after each TURN_BYTES', () => {
    const parts = [filled(10, 3), filled(2 * TURN_BYTES + 5, 7), filled(TURN_BYTES - 15, 11)];
    const total = parts.reduce((n, p) => n + p.byteLength, 0);
    const out = new Uint8Array(3 + total);
    const pauses = [...copyInParts(out, parts, 3)].length;
    expect(Buffer.from(out.subarray(3)).equals(Buffer.concat(parts))).toBe(true);
    // 3 MiB exactly: a pause before the second MiB and before the third, none after the last.
    expect(total).toBe(3 * TURN_BYTES);
    expect(pauses).toBe(2);
  });

  it('does not pause for what fits in one turn, nor for nothing', () => {
    const out = new Uint8Array(TURN_BYTES);
    expect([...copyInParts(out, [filled(TURN_BYTES, 5)])]).toHaveLength(0);
    expect([...copyInParts(new Uint8Array(0), [new Uint8Array(0)])]).toHaveLength(0);
  });
});
