/**
 * A Buffer over the same memory as a plain Uint8Array, no copy. Bytes arrive as plain arrays from
 * a worker thread (a structured clone or a transfer gives Uint8Array) and from lmdb-js past
 * 16 MiB; mailparser and Buffer's string methods (toString, indexOf with a string) want a Buffer.
 */
export function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * Bytes written between two event-loop turns when a large array is filled on the main thread: the
 * first write to each page of a new array is a page fault, about 3 ms per MiB on the 2-core
 * machine, so tens of MB written at once hold the thread for 100 ms and more.
 */
export const TURN_BYTES = 1 << 20;

/**
 * Copies `parts` one after the other into `out` from `offset` on, and yields each time another
 * TURN_BYTES are copied, so the caller can wait for the next turn there:
 * `for (const _ of copyInParts(out, parts)) await nextTurn();`. A part larger than that is cut.
 */
export function* copyInParts(out: Uint8Array, parts: Iterable<Uint8Array>, offset = 0): Generator<void, void, undefined> {
  let at = offset;
  let sinceTurn = 0;
  for (const part of parts) {
    for (let from = 0; from < part.byteLength; ) {
      if (sinceTurn >= TURN_BYTES) {
        yield;
        sinceTurn = 0;
      }
      const n = Math.min(part.byteLength - from, TURN_BYTES - sinceTurn);
      out.set(part.subarray(from, from + n), at);
      at += n;
      from += n;
      sinceTurn += n;
    }
  }
}
