/**
 * A Buffer over the same memory as a plain Uint8Array, no copy. Bytes arrive as plain arrays from
 * a worker thread (a structured clone or a transfer gives Uint8Array) and from lmdb-js past
 * 16 MiB; mailparser and Buffer's string methods (toString, indexOf with a string) want a Buffer.
 */
export function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
