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
