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

/** Bytes copied per event-loop turn by copyInTurns: about 3 ms into new memory here. */
const COPY_PART = 1 << 20;

/**
 * An exact copy that owns its memory, made a MiB per turn: the first write to each page of a new
 * array of tens of MB is a page fault, about 3 ms per MiB on the 2-core machine, which copied at
 * once would hold the main thread for 100 ms and more. `bytes` must not change meanwhile.
 */
export async function copyInTurns(bytes: Uint8Array): Promise<Uint8Array<ArrayBuffer>> {
  const out = new Uint8Array(new ArrayBuffer(bytes.byteLength));
  for (let at = 0; at < bytes.byteLength; at += COPY_PART) {
    if (at > 0) await new Promise<void>((resolve) => setImmediate(resolve));
    out.set(bytes.subarray(at, Math.min(at + COPY_PART, bytes.byteLength)), at);
  }
  return out;
}
