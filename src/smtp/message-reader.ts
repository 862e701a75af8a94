/**
 * Reads the message of one DATA command into memory, up to the size limit the listener
 * advertises in EHLO SIZE (RFC 1870). Past the limit nothing more is kept: the rest is read and
 * dropped, because the reply may only come after the final dot (RFC 5321 4.1.1.4) and the
 * client must be able to finish sending to get its 552. A session thus holds at most the limit
 * in memory, whatever the client sends.
 *
 * The chunks are joined into one Buffer at the final dot. Over a MiB they are joined a MiB per
 * event-loop turn: the first write to each page of a new array is a page fault (about 3 ms per
 * MiB here), and joining a 24 MB message at once held the main thread, where every other
 * session, the HTTP API and the scheduler run, for 76 ms (bench/RESULTS.md, large messages).
 */
import type { Readable } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { copyInParts, TURN_BYTES } from '../domain/bytes.js';

export type ReadResult = { raw: Buffer } | { oversized: number } | { disconnected: true };

/**
 * smtp-server's code for the error it ends a message's stream with when the client closed the
 * connection before the final dot: nothing to reply to and nothing to keep, and no fault of ours
 * (clients on the Internet drop mid-message all the time).
 */
const CLIENT_GONE = 'ECONNECTION';

export function readMessage(stream: Readable, limit: number): Promise<ReadResult> {
  return new Promise((resolve, reject) => {
    let chunks: Buffer[] = [];
    let size = 0;
    stream.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) chunks.push(chunk);
      else if (chunks.length > 0) chunks = []; // let what was kept go now, not at the end
    });
    stream.once('error', (err: Error & { code?: unknown }) => (err.code === CLIENT_GONE ? resolve({ disconnected: true }) : reject(err)));
    stream.once('end', () => {
      if (size > limit) return resolve({ oversized: size });
      joined(chunks, size).then((raw) => resolve({ raw }), reject);
    });
  });
}

/** The chunks in one Buffer of `size` bytes, as Buffer.concat gives them; over a MiB, a MiB per turn. */
export async function joined(chunks: readonly Buffer[], size: number): Promise<Buffer> {
  if (size <= TURN_BYTES) return Buffer.concat(chunks, size);
  const out = Buffer.allocUnsafe(size);
  for (const _ of copyInParts(out, chunks)) await nextTurn();
  return out;
}
