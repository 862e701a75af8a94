/**
 * Reads the message of one DATA command into memory, up to the size limit the listener
 * advertises in EHLO SIZE (RFC 1870). Past the limit nothing more is kept: the rest is read and
 * dropped, because the reply may only come after the final dot (RFC 5321 4.1.1.4) and the
 * client must be able to finish sending to get its 552. A session thus holds at most the limit
 * in memory, whatever the client sends.
 */
import type { Readable } from 'node:stream';

export type ReadResult = { raw: Buffer } | { oversized: number };

export function readMessage(stream: Readable, limit: number): Promise<ReadResult> {
  return new Promise((resolve, reject) => {
    let chunks: Buffer[] = [];
    let size = 0;
    stream.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) chunks.push(chunk);
      else if (chunks.length > 0) chunks = []; // let what was kept go now, not at the end
    });
    stream.once('error', reject);
    stream.once('end', () => resolve(size > limit ? { oversized: size } : { raw: Buffer.concat(chunks, size) }));
  });
}
