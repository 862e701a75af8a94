/**
 * Bytes read back from LMDB as the Buffer the store port promises. lmdb-js answers a Buffer for a
 * binary value up to 16 MiB but a plain Uint8Array past it (a message with a 25 MB attachment):
 * mailparser refuses that ('input.once is not a function') and Buffer's string methods
 * (toString, indexOf with a string) misread it. Every get makes a new array, so the view shares
 * its memory with nothing else: no copy.
 */
import { asBuffer } from '../../domain/bytes.js';

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
