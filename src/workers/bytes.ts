/**
 * Bytes that cross between the main thread and a worker thread. The structured clone that
 * carries a task's input or answer copies the whole ArrayBuffer under a view, not just the view
 * (a Buffer is often a slice of Node's 8 KiB allocation pool); and a large array (a received
 * message, up to inbound.maxMessageSize) is better handed over than copied at all.
 */

/** The bytes in an array that owns all of its ArrayBuffer: the same memory when it does, else an exact copy. */
export function ownBytes(buf: Uint8Array): Uint8Array<ArrayBuffer> {
  if (buf.byteOffset === 0 && buf.byteLength === buf.buffer.byteLength && buf.buffer instanceof ArrayBuffer) {
    return new Uint8Array(buf.buffer, 0, buf.byteLength);
  }
  return new Uint8Array(buf);
}

/**
 * The parts joined into one new Buffer that owns all of its memory (never a slice of Node's
 * pool, as Buffer.concat gives below 4 KiB), so ownBytes hands it on without another copy.
 * Strings are written as UTF-8, as Buffer.from writes them.
 */
export function joinOwned(parts: ReadonlyArray<Uint8Array | string>): Buffer {
  const bytes = parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : p));
  let total = 0;
  for (const b of bytes) total += b.byteLength;
  const out = Buffer.allocUnsafeSlow(total);
  let at = 0;
  for (const b of bytes) {
    out.set(b, at);
    at += b.byteLength;
  }
  return out;
}
