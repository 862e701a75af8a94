import { describe, expect, it } from 'vitest';
import DataStream from 'nodemailer/lib/smtp-connection/data-stream.js';
import { frame } from '../../src/delivery/smtp-data.js';

/** What nodemailer's DataStream writes for the body: the bytes the fast path must match. */
function viaDataStream(body: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const s = new DataStream();
    const out: Buffer[] = [];
    s.on('data', (c: Buffer) => out.push(c));
    s.on('end', () => resolve(Buffer.concat(out)));
    s.on('error', reject);
    s.end(body);
  });
}

const framed = (body: Buffer) => Buffer.concat(frame(body));

describe('frame (the DATA bytes, RFC 5321 4.5.2)', () => {
  it('sends a canonical body as it is, without a copy, followed by the end-of-data line', () => {
    const body = Buffer.from('Subject: hi\r\n\r\nline one\r\nline two\r\n');
    const [out, end] = frame(body);
    expect(out).toBe(body);
    expect(end.toString()).toBe('.\r\n');
    expect(frame(Buffer.from('no line end at the end'))[1].toString()).toBe('\r\n.\r\n');
  });

  it('stuffs dots and mends bare CR and LF exactly as nodemailer does', async () => {
    for (const text of ['.starts with a dot\r\n', 'a\r\n.b\r\n..c\r\n', 'bare\nlf\n.dot\n', 'bare\rcr\r.dot\r', 'mixed\r\n\n\r\r\n.', '', '.', '\r', '\n', 'x\r\n.\r\n']) {
      const body = Buffer.from(text, 'latin1');
      expect(framed(body).toString('latin1'), JSON.stringify(text)).toBe((await viaDataStream(body)).toString('latin1'));
    }
  });

  it('matches nodemailer on random bodies made of the bytes that matter', async () => {
    const alphabet = [0x0d, 0x0a, 0x2e, 0x41, 0xe9];
    let seed = 7;
    const rnd = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) % alphabet.length);
    for (let n = 0; n < 500; n++) {
      const body = Buffer.from(Array.from({ length: n % 40 }, () => alphabet[rnd()]));
      expect(framed(body).equals(await viaDataStream(body)), body.toString('latin1')).toBe(true);
    }
  });
});
