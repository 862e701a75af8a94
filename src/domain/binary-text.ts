/**
 * Text that arrives one char per byte (a "binary" string, as Buffer's 'latin1' reads it: header
 * lines from mailparser, TXT character-strings from node's resolver) read as the UTF-8 it usually
 * is (RFC 6532 3.2 for header fields). The callers differ only in what bytes that are not UTF-8
 * become, so that choice stays theirs.
 */

/** Fatal: bytes that are not UTF-8 throw rather than turn into U+FFFD. */
const UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * `binary` read as UTF-8: itself when it has no byte over 0x7f (ASCII reads the same) or holds a
 * char over U+00FF (it is text already, not one char per byte); undefined when its bytes are not
 * valid UTF-8. Linear: two single-class scans and at most one decode.
 */
export function utf8OfBinary(binary: string): string | undefined {
  if (!/[\x80-\xff]/.test(binary) || /[^\x00-\xff]/.test(binary)) return binary;
  try {
    return UTF8.decode(Buffer.from(binary, 'latin1'));
  } catch {
    return undefined;
  }
}
