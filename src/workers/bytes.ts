/**
 * Bytes that cross between the main thread and a worker thread. The structured clone that
 * carries a task's input or answer copies the whole ArrayBuffer under a view, not just the view
 * (a Buffer is often a slice of Node's 8 KiB allocation pool); and a large array (a received
 * message, up to inbound.maxMessageSize) is better handed over than copied at all.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { copyInParts } from '../domain/bytes.js';

/** The bytes in an array that owns all of its ArrayBuffer: the same memory when it does, else an exact copy. */
export function ownBytes(buf: Uint8Array): Uint8Array<ArrayBuffer> {
  return ownsAll(buf) ? new Uint8Array(buf.buffer, 0, buf.byteLength) : new Uint8Array(buf);
}

/** Whether the array is all of its ArrayBuffer (not a view into a larger one, nor shared memory): it can be handed over. */
function ownsAll(buf: Uint8Array): buf is Uint8Array<ArrayBuffer> {
  return buf.byteOffset === 0 && buf.byteLength === buf.buffer.byteLength && buf.buffer instanceof ArrayBuffer;
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

/**
 * An exact copy that owns its memory, made a MiB per turn (domain/bytes.ts copyInParts): copied
 * at once into a new array of tens of MB it would hold the main thread for 100 ms and more.
 * `bytes` must not change meanwhile.
 */
export async function copyInTurns(bytes: Uint8Array): Promise<Uint8Array<ArrayBuffer>> {
  const out = new Uint8Array(new ArrayBuffer(bytes.byteLength));
  for (const _ of copyInParts(out, [bytes])) await nextTurn();
  return out;
}

/**
 * Handed over rather than copied from this size on: a structured clone of 24 MB cost the
 * receiving thread 100-140 ms (the page faults of its new copy).
 */
const HAND_OVER_MIN_BYTES = 1 << 20;

/** The arrays among `bytes` that are large enough to hand over and own all of their memory, each once. */
export function largeOwned(bytes: ReadonlyArray<Uint8Array | undefined>): Uint8Array<ArrayBuffer>[] {
  const out: Uint8Array<ArrayBuffer>[] = [];
  for (const b of bytes) {
    if (b && b.byteLength >= HAND_OVER_MIN_BYTES && ownsAll(b) && !out.some((o) => o.buffer === b.buffer)) out.push(b);
  }
  return out;
}
