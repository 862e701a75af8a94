/**
 * The non-ASCII test for strings: internationalized names and addresses (RFC 6531, IDNA), header
 * text read as latin1, TXT records. For a Buffer, node:buffer's isAscii (a native scan) is used.
 */

// One character class, no quantifier: a single scan that stops at the first match.
const NON_ASCII = /[^\x00-\x7f]/;

/** Whether `s` has a character above U+007F (outside US-ASCII). */
export function hasNonAscii(s: string): boolean {
  return NON_ASCII.test(s);
}
