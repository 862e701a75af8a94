/**
 * An SMTP session over STARTTLS whose TLS runs over a stream that counts the TLS records the
 * server sends (RFC 8446 5.1: a 5-byte header, the length in bytes 3-4), for tests of how the
 * listeners write their replies (test/integration/smtp-submission.test.ts, pipelining). Replies
 * are read whole (RFC 5321 4.2.1: the last line is "NNN text").
 */
import net from 'node:net';
import { Duplex } from 'node:stream';
import tls from 'node:tls';
import { expect } from 'vitest';

/** Reads whole replies (the last line "NNN text") from a stream of reply lines. */
export class Replies {
  private buffer = '';
  private waiters: Array<() => void> = [];

  constructor(stream: NodeJS.ReadableStream) {
    stream.on('data', (d: Buffer) => {
      this.buffer += d.toString('latin1');
      for (const w of this.waiters.splice(0)) w();
    });
  }

  /** The next reply's lines. */
  async next(): Promise<string[]> {
    for (const deadline = Date.now() + 10_000; ; ) {
      const lines: string[] = [];
      let rest = this.buffer;
      for (let eol = rest.indexOf('\r\n'); eol >= 0; eol = rest.indexOf('\r\n')) {
        const line = rest.slice(0, eol);
        rest = rest.slice(eol + 2);
        lines.push(line);
        if (line[3] === ' ') {
          this.buffer = rest;
          return lines;
        }
      }
      if (Date.now() > deadline) throw new Error(`no reply (have ${JSON.stringify(this.buffer)})`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 200);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** The next reply's last line. */
  async line(): Promise<string> {
    const lines = await this.next();
    return lines[lines.length - 1];
  }
}

/** A session after STARTTLS, EHLO and AUTH PLAIN as `user`, with the count of TLS records received so far. */
export async function securedSession(port: number, user: string, pass: string): Promise<{ secure: tls.TLSSocket; replies: Replies; records: () => number; ehlo: string[] }> {
  const raw = net.connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => raw.once('connect', resolve).once('error', reject));
  const plain = new Replies(raw);
  expect(await plain.line()).toMatch(/^220 /);
  raw.write('EHLO client.example\r\n');
  await plain.next();
  raw.write('STARTTLS\r\n');
  expect(await plain.line()).toMatch(/^220 /);
  raw.removeAllListeners('data');

  let count = 0;
  let pending = Buffer.alloc(0);
  const tap = new Duplex({
    read() {},
    write(chunk: Buffer, _enc, done) {
      raw.write(chunk, done);
    },
  });
  raw.on('data', (d: Buffer) => {
    pending = Buffer.concat([pending, d]);
    while (pending.length >= 5 && pending.length >= 5 + pending.readUInt16BE(3)) {
      count++;
      pending = pending.subarray(5 + pending.readUInt16BE(3));
    }
    tap.push(d);
  });
  raw.on('close', () => tap.push(null));
  const secure = tls.connect({ socket: tap, rejectUnauthorized: false });
  await new Promise<void>((resolve, reject) => secure.once('secureConnect', resolve).once('error', reject));
  const replies = new Replies(secure);
  secure.write('EHLO client.example\r\n');
  const ehlo = await replies.next();
  secure.write(`AUTH PLAIN ${Buffer.from(`\0${user}\0${pass}`).toString('base64')}\r\n`);
  expect(await replies.line()).toMatch(/^235 /);
  return { secure, replies, records: () => count, ehlo };
}
