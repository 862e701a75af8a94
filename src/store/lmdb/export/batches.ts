/**
 * Records in batches for the importing side: at most BATCH_RECORDS records (a multi-row INSERT
 * each), and at most about BATCH_BYTES of the large parts of records (`size`: bodies, text and
 * HTML, requests to compose), so that a store of large messages never sends one statement of
 * gigabytes.
 */
export const BATCH_RECORDS = 1_000;
export const BATCH_BYTES = 8 * 1024 * 1024;

export function* inBatches<T>(records: Iterable<T>, size: (r: T) => number = () => 0, max = BATCH_RECORDS): Generator<T[]> {
  let batch: T[] = [];
  let bytes = 0;
  for (const r of records) {
    batch.push(r);
    bytes += size(r);
    if (batch.length >= max || bytes >= BATCH_BYTES) {
      yield batch;
      batch = [];
      bytes = 0;
    }
  }
  if (batch.length > 0) yield batch;
}
