/**
 * smtp/message-reader.ts: a DATA command's message read into one Buffer, the chunks of a message
 * over a MiB joined a MiB per event-loop turn; past the size limit only its size is kept.
 */
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { joined, readMessage } from '../../src/smtp/message-reader.js';
import { turnsDuring } from '../support/turns.js';

function chunksOf(total: number, chunk: number): Buffer[] {
  const out: Buffer[] = [];
  for (let at = 0; at < total; at += chunk) {
    const b = Buffer.alloc(Math.min(chunk, total - at));
    for (let i = 0; i < b.length; i++) b[i] = ((at + i) * 11) & 0xff;
    out.push(b);
  }
  return out;
}

describe('readMessage', () => {
  it('joins a message over a MiB a part per turn into the bytes sent, in memory of its own', async () => {
    const chunks = chunksOf(5 * 1024 * 1024 + 3, 65_536);
    const { value, turns } = await turnsDuring(() => joined(chunks, 5 * 1024 * 1024 + 3));
    expect(value.equals(Buffer.concat(chunks))).toBe(true);
    expect(value.byteOffset).toBe(0);
    expect(value.buffer.byteLength).toBe(value.length);
    expect(turns).toBeGreaterThanOrEqual(4);
  });

  it('answers a small message at once, and only the size of one over the limit', async () => {
    const small = chunksOf(1000, 300);
    expect(await readMessage(Readable.from(small), 1000)).toEqual({ raw: Buffer.concat(small) });
    expect(await readMessage(Readable.from(chunksOf(3000, 1000)), 2500)).toEqual({ oversized: 3000 });
  });

  it('answers disconnected when the client closed the connection before the final dot, and rejects with any other error', async () => {
    const cut = (code: string) => {
      const stream = new Readable({ read() {} });
      stream.push(Buffer.from('From: a@example.org\r\n'));
      setImmediate(() => stream.destroy(Object.assign(new Error('gone'), { code })));
      return stream;
    };
    expect(await readMessage(cut('ECONNECTION'), 1000)).toEqual({ disconnected: true });
    await expect(readMessage(cut('EOTHER'), 1000)).rejects.toThrow('gone');
  });

  it('reads a large message from a stream whole', async () => {
    const chunks = chunksOf(3 * 1024 * 1024, 16_384);
    const r = await readMessage(Readable.from(chunks), 4 * 1024 * 1024);
    expect('raw' in r && r.raw.equals(Buffer.concat(chunks))).toBe(true);
  });
});
