import { describe, expect, it } from 'vitest';
import { isUuid, timeOrderedUuid } from '../../src/domain/uuid.js';

/** The 48-bit Unix milliseconds of a UUIDv7 (RFC 9562 5.7). */
function millisOf(id: string): number {
  return parseInt(id.replace(/-/g, '').slice(0, 12), 16);
}

describe('timeOrderedUuid (RFC 9562 UUIDv7)', () => {
  it('is a UUID of version 7 and variant 10xx that the API accepts as an id', () => {
    for (let i = 0; i < 1000; i++) {
      const id = timeOrderedUuid();
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(isUuid(id)).toBe(true);
    }
  });

  it('carries the time it was made in its first 48 bits, so ids sort by time', () => {
    const at = Date.UTC(2026, 11, 6, 21, 30, 0, 123);
    expect(millisOf(timeOrderedUuid(at))).toBe(at);
    expect(timeOrderedUuid(0).startsWith('00000000-0000-7')).toBe(true);
    // The largest 48-bit time (year 10889) still fits its 12 hex digits.
    expect(millisOf(timeOrderedUuid(2 ** 48 - 1))).toBe(2 ** 48 - 1);
    const earlier = timeOrderedUuid(at);
    const later = timeOrderedUuid(at + 1);
    expect(earlier < later).toBe(true);
  });

  it('keeps 74 random bits: ids made in the same millisecond differ', () => {
    const at = Date.now();
    const ids = new Set(Array.from({ length: 10_000 }, () => timeOrderedUuid(at)));
    expect(ids.size).toBe(10_000);
    // Every random hex digit takes more than one value (a fixed one would show a slip in the layout).
    const sample = [...ids];
    for (const pos of [15, 16, 17, 20, 21, 22, 24, 25, 30, 35]) {
      expect(new Set(sample.map((id) => id[pos])).size).toBeGreaterThan(8);
    }
  });
});
