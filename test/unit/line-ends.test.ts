import { describe, expect, it } from 'vitest';
import { frame } from '../../src/delivery/smtp-data.js';
import { crlfLineEnds } from '../../src/domain/line-ends.js';

const framed = (body: Buffer) => Buffer.concat(frame(body));

describe('crlfLineEnds (a submitted message as delivery sends it)', () => {
  it('keeps a message with CRLF line ends as it is, without a copy', () => {
    const raw = Buffer.from('Subject: hi\r\n\r\nline one\r\nline two\r\n');
    expect(crlfLineEnds(raw)).toBe(raw);
    const empty = Buffer.alloc(0);
    expect(crlfLineEnds(empty)).toBe(empty);
  });

  it('makes each bare CR and bare LF a CRLF', () => {
    const cases: Array<[string, string]> = [
      ['a\nb\n', 'a\r\nb\r\n'],
      ['a\rb\r', 'a\r\nb\r\n'],
      ['Subject: x\rBcc: y\r\n', 'Subject: x\r\nBcc: y\r\n'],
      ['\r\r\n\n\r\n\r', '\r\n\r\n\r\n\r\n\r\n'],
      ['\n', '\r\n'],
    ];
    for (const [input, output] of cases) expect(crlfLineEnds(Buffer.from(input, 'latin1')).toString('latin1'), JSON.stringify(input)).toBe(output);
  });

  it('changes nothing that delivery sends: the framed bytes are the same', () => {
    for (const text of ['bare\nlf\n.dot\n', 'bare\rcr\r.dot\r', 'mixed\r\n\n\r\r\n.', '.', '\r', 'x\r\n.\r\n', 'a\r\r\r\n\n\n.b']) {
      const body = Buffer.from(text, 'latin1');
      expect(framed(crlfLineEnds(body)).toString('latin1'), JSON.stringify(text)).toBe(framed(body).toString('latin1'));
    }
  });
});
