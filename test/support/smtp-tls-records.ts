/**
 * An SMTP session over STARTTLS whose TLS runs over a stream that counts the TLS records the
 * server sends (RFC 8446 5.1: a 5-byte header, the length in bytes 3-4), for tests of how the
 * listeners write their replies (test/integration/smtp-submission.test.ts, pipelining). Its
 * replies are read by SmtpWire on both sides of the STARTTLS.
 */
import { Duplex } from 'node:stream';
import tls from 'node:tls';
import { expect } from 'vitest';
import { SmtpWire } from './smtp-wire.js';

/** A session after STARTTLS, EHLO and AUTH PLAIN as `user`, with the count of TLS records received so far. */
export async function securedSession(port: number, user: string, pass: string): Promise<{ wire: SmtpWire; records: () => number; ehlo: string[] }> {
  const plain = await SmtpWire.connect(port);
  expect((await plain.reply())?.code).toBe(220);
  await plain.cmd('EHLO client.example');
  expect((await plain.cmd('STARTTLS'))?.code).toBe(220);
  const raw = plain.socket;
  raw.removeAllListeners('data');

  let count = 0;
  let pending = Buffer.alloc(0);
  const tap = new Duplex({
    read() {},
    write(chunk: Buffer, _enc, done) {
      raw.write(chunk, done);
    },
  });
  // SmtpWire read the plain side as latin1 text: back to the bytes, unchanged.
  raw.on('data', (d: string) => {
    const bytes = Buffer.from(d, 'latin1');
    pending = Buffer.concat([pending, bytes]);
    while (pending.length >= 5 && pending.length >= 5 + pending.readUInt16BE(3)) {
      count++;
      pending = pending.subarray(5 + pending.readUInt16BE(3));
    }
    tap.push(bytes);
  });
  raw.on('close', () => tap.push(null));
  const secure = tls.connect({ socket: tap, rejectUnauthorized: false });
  await new Promise<void>((resolve, reject) => secure.once('secureConnect', resolve).once('error', reject));
  const wire = SmtpWire.over(secure);
  const ehlo = (await wire.cmd('EHLO client.example'))?.lines ?? [];
  expect((await wire.cmd(`AUTH PLAIN ${Buffer.from(`\0${user}\0${pass}`).toString('base64')}`))?.code).toBe(235);
  return { wire, records: () => count, ehlo };
}
