/**
 * Replies to a pipelined group (RFC 2920) leave the submission listener together: a client that
 * sends MAIL FROM, RCPT TO and DATA in one write gets their three replies in one write, which on
 * TLS is one record (src/smtp/wire-server.ts coalesceReplies). Counted on the wire: the client's
 * TLS runs over a stream that sees every record the server sends. Also: a refusal in the middle
 * of a group keeps the replies in order, and a client that does not pipeline gets each reply
 * without waiting for anything.
 */
import net from 'node:net';
import { Duplex } from 'node:stream';
import tls from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemonWithDns, stopDaemonWithDns, type TestDaemon } from '../support/daemon.js';
import type { TestDns } from '../support/dns-server.js';
import { setupSender, type Sender } from '../support/sending.js';

let dns: TestDns;
let t: TestDaemon;
let s: Sender;

beforeAll(async () => {
  ({ t, dns } = await startDaemonWithDns({ 'smtp.enabled': true, 'smtp.port': 0 }));
  s = await setupSender(t, dns);
});

afterAll(() => stopDaemonWithDns({ t, dns }));

/** Reads whole replies (the last line "NNN text") from a stream of reply lines. */
class Replies {
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

/**
 * A session after STARTTLS, EHLO and AUTH, whose TLS runs over a stream that counts the TLS
 * records the server sends (RFC 8446 5.1: a 5-byte header, the length in bytes 3-4).
 */
async function securedSession(): Promise<{ secure: tls.TLSSocket; replies: Replies; records: () => number; ehlo: string[] }> {
  const raw = net.connect(t.daemon.smtp!.port, '127.0.0.1');
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
  secure.write(`AUTH PLAIN ${Buffer.from(`\0${s.channelId}\0${t.apiKey}`).toString('base64')}\r\n`);
  expect(await replies.line()).toMatch(/^235 /);
  return { secure, replies, records: () => count, ehlo };
}

const message = (to: string) => `From: <app@${s.domain}>\r\nTo: <${to}>\r\nSubject: pipelined\r\n\r\nHello\r\n.\r\n`;

describe('the submission listener with a pipelining client (RFC 2920)', () => {
  it('answers MAIL FROM, RCPT TO and DATA sent in one write with one TLS record, each transaction', async () => {
    const { secure, replies, records, ehlo } = await securedSession();
    expect(ehlo).toContain('250-PIPELINING');
    for (const to of ['first@example.org', 'second@example.org']) {
      const before = records();
      secure.write(`MAIL FROM:<app@${s.domain}>\r\nRCPT TO:<${to}>\r\nDATA\r\n`);
      expect(await replies.line()).toMatch(/^250 /);
      expect(await replies.line()).toMatch(/^250 /);
      expect(await replies.line()).toMatch(/^354 /);
      expect(records() - before).toBe(1);
      secure.write(message(to));
      expect(await replies.line()).toMatch(/^250 .*queued/i);
      expect(records() - before).toBe(2);
    }
    secure.destroy();
  });

  it('keeps the replies in order when a command of the group is refused', async () => {
    const { secure, replies } = await securedSession();
    secure.write(`MAIL FROM:<app@${s.domain}>\r\nRCPT TO:<not an address>\r\nRCPT TO:<ok@example.org>\r\nDATA\r\n`);
    expect(await replies.line()).toMatch(/^250 /);
    expect(await replies.line()).toMatch(/^5\d\d /);
    expect(await replies.line()).toMatch(/^250 /);
    expect(await replies.line()).toMatch(/^354 /);
    secure.write(message('ok@example.org'));
    expect(await replies.line()).toMatch(/^250 /);
    secure.destroy();
  });

  it('answers a client that waits for each reply without holding any back', async () => {
    const { secure, replies } = await securedSession();
    secure.write(`MAIL FROM:<app@${s.domain}>\r\n`);
    expect(await replies.line()).toMatch(/^250 /);
    secure.write('RCPT TO:<one@example.org>\r\n');
    expect(await replies.line()).toMatch(/^250 /);
    secure.write('DATA\r\n');
    expect(await replies.line()).toMatch(/^354 /);
    secure.write(message('one@example.org'));
    expect(await replies.line()).toMatch(/^250 /);
    secure.write('QUIT\r\n');
    expect(await replies.line()).toMatch(/^221 /);
    secure.destroy();
  });
});
