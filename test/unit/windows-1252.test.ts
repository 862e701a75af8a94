/**
 * windows1252 (src/domain/windows-1252.ts): bytes read as the WHATWG Encoding standard's
 * windows-1252, the encoding it gives the "latin1" and "iso-8859-1" labels.
 */
import { describe, expect, it } from 'vitest';
import { windows1252 } from '../../src/domain/windows-1252.js';

const byte = (b: number) => windows1252(String.fromCharCode(b));

describe('windows1252', () => {
  it('reads 0x80-0x9f as the letters and punctuation of windows-1252, not as C1 controls', () => {
    expect([0x80, 0x82, 0x8a, 0x92, 0x93, 0x94, 0x96, 0x97, 0x99, 0x9f].map(byte).join('')).toBe('€‚Š’“”–—™Ÿ');
    // The five bytes Windows leaves unassigned are their own code points in the WHATWG index.
    expect([0x81, 0x8d, 0x8f, 0x90, 0x9d].map((b) => byte(b).charCodeAt(0))).toEqual([0x81, 0x8d, 0x8f, 0x90, 0x9d]);
  });

  it('agrees with ISO-8859-1 everywhere else, one character for every byte', () => {
    const others = Array.from({ length: 256 }, (_, b) => b).filter((b) => b < 0x80 || b > 0x9f);
    expect(others.map((b) => byte(b).charCodeAt(0))).toEqual(others);
    const all = String.fromCharCode(...Array.from({ length: 256 }, (_, b) => b));
    expect(windows1252(all)).toHaveLength(256);
    expect(windows1252('J\xf6rg M\xfcller \x96 B\xfcro')).toBe('Jörg Müller – Büro');
  });
});
