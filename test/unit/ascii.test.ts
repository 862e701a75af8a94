import { describe, expect, it } from 'vitest';
import { hasNonAscii } from '../../src/domain/ascii.js';

describe('hasNonAscii', () => {
  it.each([
    ['', false],
    ['plain text with every ASCII control \x00\x01\x1f and DEL \x7f', false],
    ['bücher.example', true],
    ['latin1 octet \x80', true],
    ['\xff', true],
    ['✓', true],
    ['\u{1f4e7}', true], // a surrogate pair
  ])('%j: %s', (s, expected) => {
    expect(hasNonAscii(s)).toBe(expected);
  });
});
