/**
 * Bytes read back from LMDB as the Buffer the store port promises. lmdb-js answers a Buffer for a
 * binary value up to 16 MiB but a plain Uint8Array past it (a message with a 25 MB attachment):
 * mailparser refuses that ('input.once is not a function') and Buffer's string methods
 * (toString, indexOf with a string) misread it. Every get makes a new array, so the view shares
 * its memory with nothing else: no copy.
 */
import type { LRUCache } from 'lru-cache';
import { asBuffer } from '../../domain/bytes.js';
import type { ByBytes } from './read-caches.js';

export function storedBytes(value: unknown): Buffer | undefined {
  return value === undefined ? undefined : asBuffer(value as Uint8Array);
}

/**
 * A value's bytes without a copy, to compare with bytes kept from an earlier read: valid only
 * until the next read. lmdb-js's getBinaryFast answers its shared read buffer with `length` set
 * to the value's size as an own property, which Buffer's native methods (equals, compare,
 * Buffer.from) do not honour; a view of exactly that many bytes does.
 */
export function peekBytes(db: { getBinaryFast(id: unknown): Uint8Array | undefined }, id: unknown): Buffer | undefined {
  const bytes = db.getBinaryFast(id);
  return bytes && asBuffer(bytes.subarray(0, bytes.length));
}

/**
 * The value `derive` makes of record `id`, reused while the stored bytes are the ones it was made
 * from: the bytes are read (not decoded) on every call and compared with the cached entry's, so
 * any write is seen by the very next read (inside a write too: its own bytes are compared, and a
 * write that throws leaves other bytes). For records read many times per message and rarely
 * written: comparing bytes is cheaper than decoding them. Undefined when there is no record.
 */
export function revalidated<T>(
  db: { getBinaryFast(id: unknown): Uint8Array | undefined },
  cache: LRUCache<string, ByBytes<T>>,
  id: string,
  derive: () => T,
): T | undefined {
  // Valid until the next read (lmdb-js reuses the buffer): compared here, copied on a miss.
  const bytes = peekBytes(db, id);
  if (!bytes) {
    cache.delete(id);
    return undefined;
  }
  const hit = cache.get(id);
  if (hit && hit.bytes.equals(bytes)) return hit.value;
  const copy = Buffer.from(bytes);
  // The same read snapshot as the bytes above (no await between them).
  const value = derive();
  cache.set(id, { bytes: copy, value });
  return value;
}
