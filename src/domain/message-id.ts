/**
 * A Message-ID header (RFC 5322 3.6.4) as a lookup key: the msg-id without its angle brackets.
 * Used where a client's own id is indexed and looked up (the store's client Message-ID index,
 * inbound feedback reports that name only the original's headers).
 */
import { isWhiteSpace } from './white-space.js';

/** Longer ids are not kept: store keys are limited (LMDB: about 1,900 bytes), real ids are < 100. */
const MAX_ID_LENGTH = 500;

/**
 * The msg-id without its angle brackets and surrounding space; undefined when empty or too long.
 * Index arithmetic, not `/\s*>$/`: the header comes from submitted mail and from the original in
 * an unauthenticated report, and that expression rescans a run of white space from each of its
 * characters (quadratic: 54 s for 200 KB of spaces, issue 29).
 */
export function bareMessageId(header: string | undefined): string | undefined {
  const s = (header ?? '').trim();
  let start = 0;
  if (s.startsWith('<')) {
    start = 1;
    while (start < s.length && isWhiteSpace(s.charCodeAt(start))) start++;
  }
  let end = s.length;
  if (end > start && s.endsWith('>')) {
    end--;
    while (end > start && isWhiteSpace(s.charCodeAt(end - 1))) end--;
  }
  return end > start && end - start <= MAX_ID_LENGTH ? s.slice(start, end) : undefined;
}
