import { describe, expect, it } from 'vitest';
import { headerBlockEnd, headerBlockExceeds, headerEnd, splitMessage } from '../../src/domain/raw-headers.js';

const raw = (s: string): Buffer => Buffer.from(s, 'latin1');

describe('headerEnd', () => {
  it('finds the CRLF blank line of a CRLF message, with or without bareLf', () => {
    const m = raw('From: a@example.com\r\nSubject: hi\r\n\r\nbody\r\n\r\nmore\r\n');
    expect(headerEnd(m)).toBe(32);
    expect(headerEnd(m, { bareLf: true })).toBe(32);
    expect(m.subarray(0, 32).toString()).toBe('From: a@example.com\r\nSubject: hi');
    expect(m[32]).toBe(0x0d);
  });

  it('finds a bare-LF blank line only with bareLf', () => {
    const m = raw('From: a@example.com\nSubject: hi\n\nbody\n');
    expect(headerEnd(m)).toBe(-1);
    expect(headerEnd(m, { bareLf: true })).toBe(31);
    expect(m[31]).toBe(0x0a);
  });

  it('takes whichever blank line comes first in a message that mixes line ends', () => {
    // CRLF fields, a bare-LF blank line, then a CRLF one in the body.
    const lfFirst = raw('A: 1\r\nB: 2\n\nbody\r\n\r\nmore');
    expect(headerEnd(lfFirst)).toBe(16);
    expect(headerEnd(lfFirst, { bareLf: true })).toBe(10);
    // Bare-LF fields, a CRLF blank line, then a bare-LF one in the body.
    const crlfFirst = raw('A: 1\nB: 2\r\n\r\nbody\n\nmore');
    expect(headerEnd(crlfFirst)).toBe(9);
    expect(headerEnd(crlfFirst, { bareLf: true })).toBe(9);
    // CRLF then LF: "\r\n\n" is a bare-LF blank line starting at the LF.
    expect(headerEnd(raw('A: 1\r\n\nbody'), { bareLf: true })).toBe(5);
    // LF then CRLF: "\n\r\n" is neither (no CR before the first LF).
    expect(headerEnd(raw('A: 1\n\r\nbody'), { bareLf: true })).toBe(-1);
  });

  it('is -1 for a message without a blank line', () => {
    expect(headerEnd(raw('A: 1\r\nB: 2\r\n'))).toBe(-1);
    expect(headerEnd(raw('A: 1\r\nB: 2\r\n'), { bareLf: true })).toBe(-1);
    expect(headerEnd(raw(''), { bareLf: true })).toBe(-1);
  });

  it('ends a header-only message at its closing blank line, with an empty body', () => {
    expect(headerEnd(raw('A: 1\r\nB: 2\r\n\r\n'))).toBe(10);
    expect(headerEnd(raw('A: 1\nB: 2\n\n'), { bareLf: true })).toBe(9);
    expect(headerEnd(raw('\r\n\r\nbody'), { bareLf: true })).toBe(0);
    expect(splitMessage(raw('A: 1\r\nB: 2\r\n\r\n'))).toEqual({ fields: [{ name: 'A', raw: 'A: 1' }, { name: 'B', raw: 'B: 2' }], body: Buffer.alloc(0), eol: '\r\n' });
  });

  it('counts only a blank line lying wholly within `within` octets', () => {
    const crlf = raw('A: 1\r\n\r\nbody'); // blank line at 4..7
    expect(headerEnd(crlf, { within: 8 })).toBe(4);
    expect(headerEnd(crlf, { within: 7 })).toBe(-1);
    expect(headerEnd(crlf, { within: 2 })).toBe(-1);
    const lf = raw('A: 1\n\nbody\n\nmore'); // blank line at 4..5
    expect(headerEnd(lf, { bareLf: true, within: 6 })).toBe(4);
    expect(headerEnd(lf, { bareLf: true, within: 5 })).toBe(-1);
    // A CRLF blank line past the bound does not hide a bare-LF one within it, nor the reverse.
    expect(headerEnd(raw('A: 1\n\nB\r\n\r\n'), { bareLf: true, within: 7 })).toBe(4);
    expect(headerEnd(raw('A: 1\r\n\r\nB\n\n'), { bareLf: true, within: 9 })).toBe(4);
  });

  it('says whether the header block is longer than the limit by where its blank line starts', () => {
    const m = raw('A: 1\r\n\r\nbody that makes the message longer than the limit');
    expect(headerBlockExceeds(m, 4)).toBe(false);
    expect(headerBlockExceeds(m, 3)).toBe(true);
    const lf = raw('A: 1\n\nbody that makes the message longer than the limit');
    expect(headerBlockExceeds(lf, 4)).toBe(false);
    expect(headerBlockExceeds(lf, 3)).toBe(true);
    expect(headerBlockExceeds(raw('A: 1\r\nB: 2 and no blank line at all'), 8)).toBe(true);
  });

  it('counts the octets before the blank line against the limit, a CRLF or bare-LF one alike', () => {
    // A block of n octets (one field, its line end belongs to the blank line's match), then the blank line and a body.
    const message = (n: number, eol: string) => raw(`A: ${'a'.repeat(n - 3)}${eol}${eol}body longer than the limit`);
    for (const eol of ['\r\n', '\n']) {
      expect([eol, headerBlockEnd(message(20, eol), 20), headerBlockExceeds(message(20, eol), 20)]).toEqual([eol, 20, false]);
      // A bare-LF blank line is 2 octets to CRLF's 4, but the block before it is not allowed 2 more.
      for (const n of [21, 22]) expect([eol, n, headerBlockEnd(message(n, eol), 20), headerBlockExceeds(message(n, eol), 20)]).toEqual([eol, n, -1, true]);
    }
    // Without a blank line: all header, at most the limit or refused.
    expect(headerBlockEnd(raw('A: 1\r\nB: 2'), 10)).toBe(10);
    expect(headerBlockEnd(raw('A: 1\r\nB: 2'), 9)).toBe(-1);
  });
});
