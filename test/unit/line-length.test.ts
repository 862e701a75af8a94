import { simpleParser } from 'mailparser';
import { describe, expect, it } from 'vitest';
import { joinMessage, splitMessage } from '../../src/domain/raw-headers.js';
import { fitLineLength, longestLine } from '../../src/submission/line-length.js';

const fit = (raw: string) => joinMessage(fitLineLength(splitMessage(Buffer.from(raw, 'latin1')))).toString('latin1');
const LONG = 'word '.repeat(300).trim(); // 1,499 octets

describe('lines over 998 octets at submission (RFC 5322 2.1.1)', () => {
  it('measures lines in octets without their line break', () => {
    expect(longestLine(Buffer.from(`${'x'.repeat(998)}\r\nshort\r\n`))).toBe(998);
    expect(longestLine(Buffer.from(`a\n${'x'.repeat(999)}`))).toBe(999);
  });

  it('leaves a message without long lines as it is, byte for byte', () => {
    const msg = splitMessage(Buffer.from(`Subject: x\r\n\r\n${'x'.repeat(998)}\r\n`));
    expect(fitLineLength(msg)).toBe(msg);
  });

  it('keeps LF line breaks in a message that uses them', async () => {
    const out = fit(`Subject: x\n\nfirst\n${LONG}\n`);
    expect(out).toContain('Content-Transfer-Encoding: quoted-printable\nMIME-Version: 1.0\n\nfirst\n');
    expect(out).not.toContain('\r');
    expect(longestLine(Buffer.from(out, 'latin1'))).toBeLessThanOrEqual(76);
    expect((await simpleParser(Buffer.from(out, 'latin1'))).text).toBe(`first\n${LONG}\n`);
  });

  it('re-encodes a part without headers (text/plain by default) and keeps the delimiters as they were', async () => {
    const raw = `Content-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\n\r\n${LONG}\r\n--b \r\nContent-Type: text/plain\r\n\r\nkept\r\n--b--\r\nepilogue\r\n`;
    const out = fit(raw);
    expect(out).toContain('--b\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\nword word');
    expect(out).toContain('\r\n--b \r\nContent-Type: text/plain\r\n\r\nkept\r\n--b--\r\nepilogue\r\n');
    const parsed = await simpleParser(Buffer.from(out, 'latin1'));
    expect(parsed.text).toContain(LONG);
  });

  it.each([
    ['a multipart without a boundary', `Content-Type: multipart/mixed\r\n\r\n${LONG}\r\n`, /without a boundary/],
    ['a boundary that never occurs', `Content-Type: multipart/mixed; boundary=zz\r\n\r\n${LONG}\r\n`, /never occurs/],
    ['a long preamble', `Content-Type: multipart/mixed; boundary=b\r\n\r\n${LONG}\r\n--b\r\n\r\nx\r\n--b--\r\n`, /preamble/],
    ['a long epilogue', `Content-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\n\r\nx\r\n--b--\r\n${LONG}\r\n`, /epilogue/],
    ['a digest part, message/rfc822 by default (RFC 2046 5.1.5)', `Content-Type: multipart/digest; boundary=b\r\n\r\n--b\r\n\r\n${LONG}\r\n--b--\r\n`, /message\/rfc822/],
    ['a quoted-printable part', `Content-Transfer-Encoding: quoted-printable\r\n\r\n${LONG}\r\n`, /encoded as quoted-printable/],
    [
      'parts nested deeper than 20',
      `${Array.from({ length: 22 }, (_, i) => `Content-Type: multipart/mixed; boundary=b${i}\r\n\r\n--b${i}\r\n`).join('')}\r\n${LONG}\r\n`,
      /nested more than 20/,
    ],
  ])('refuses %s with long lines', (_name, raw, why) => {
    expect(() => fit(raw)).toThrow(why);
  });
});
