/**
 * One page of a cursor walk over an LMDB range, for the store's batched walks (the finishing
 * stage's backlog, signing.ts; retention's DNS failure sweep, dns-failures.ts; a deleted channel's
 * purge, channel-purge.ts and inbound-purge.ts). lmdb-js's range
 * `start` is inclusive, so one more is asked and the cursor's own key skipped. The page is read
 * whole, so the caller's writes that follow change nothing under a live iterator.
 */

/** Whether two composite keys (arrays of parts) are the same key. */
export function sameKeyParts(a: readonly unknown[], b: readonly unknown[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** Up to `limit` items in key order after key `after` (absent: from the first). */
export function pageAfter<T, K>(
  after: K | undefined,
  limit: number,
  read: (range: { start?: K; limit: number }) => Iterable<T>,
  keyOf: (item: T) => K,
  sameKey: (a: K, b: K) => boolean = (a, b) => a === b,
): T[] {
  const range = after === undefined ? { limit } : { start: after, limit: limit + 1 };
  const page: T[] = [];
  for (const item of read(range)) {
    if (after !== undefined && sameKey(keyOf(item), after)) continue;
    page.push(item);
    if (page.length >= limit) break;
  }
  return page;
}
