/**
 * workers/bytes.ts copyInTurns: an exact copy that owns all of its memory, made a MiB per
 * event-loop turn, so that the page faults of a new array of tens of MB never hold the main
 * thread at once.
 */
import { describe, expect, it } from 'vitest';
import { copyInTurns } from '../../src/workers/bytes.js';
import { turnsDuring } from '../support/turns.js';

describe('copyInTurns', () => {
  it('copies a part per turn, exactly, into memory of its own', async () => {
    const pool = new Uint8Array(4 * 1024 * 1024 + 300);
    for (let i = 0; i < pool.length; i++) pool[i] = (i * 7) & 0xff;
    const src = pool.subarray(50, pool.length - 50);
    const { value: copy, turns } = await turnsDuring(() => copyInTurns(src));
    expect(Buffer.from(copy).equals(Buffer.from(src))).toBe(true);
    expect(copy.byteOffset).toBe(0);
    expect(copy.buffer.byteLength).toBe(src.byteLength);
    expect(copy.buffer).not.toBe(src.buffer);
    // Five parts (4 MiB and a little): a turn between each two.
    expect(turns).toBeGreaterThanOrEqual(4);
  });

  it('copies nothing into an empty array', async () => {
    expect((await copyInTurns(new Uint8Array(0))).byteLength).toBe(0);
  });
});
