/**
 * The parsers of submitted mail and remote replies that issue 29's audit rewrote, on their
 * pathological inputs at a moderate size: what they return must be what they returned for
 * ordinary input (their time on the largest inputs is test/worst-case/mail.worst.ts's business).
 */
import { simpleParser } from 'mailparser';
import { describe, expect, it } from 'vitest';
import { classifyRawReply, MAX_REPLY_LENGTH, parseReply } from '../../src/domain/smtp-reply.js';
import { headerBlockExceeds, joinMessage, splitMessage } from '../../src/domain/raw-headers.js';
import { trimBlanksEnd, trimLineEndBlanks } from '../../src/domain/white-space.js';
import { bareMessageId } from '../../src/domain/message-id.js';
import { fitLineLength, longestLine } from '../../src/submission/line-length.js';
import { fastContent, parsedContent } from '../../src/submission/raw-content.js';
import { rng } from '../support/random.js';

const blanks = (n: number) => ' \t'.repeat(n / 2);

describe('white space trimming without rescans', () => {
  it('removes the blanks before each line end and at the end, and keeps those inside a line', () => {
    const s = `a${blanks(100_000)}b ${blanks(10)}\r\nc\t\nd${blanks(100_000)}`;
    expect(trimLineEndBlanks(s)).toBe(`a${blanks(100_000)}b\r\nc\nd`);
    expect(trimBlanksEnd(`--b${blanks(100_000)}x${blanks(100_000)}`)).toBe(`--b${blanks(100_000)}x`);
  });

  it('gives what /[\\t ]+$/gm removes on generated strings, the same string when there is nothing to remove', () => {
    const next = rng(36);
    const alphabet = ['a', '=', ' ', '\t', '\r', '\n', '\r\n', '\u2028', '\u2029', '\u00a0'];
    for (let i = 0; i < 2000; i++) {
      const s = Array.from({ length: Math.floor(next() * 24) }, () => alphabet[Math.floor(next() * alphabet.length)]).join('');
      const want = s.replace(/[\t ]+$/gm, '');
      expect(trimLineEndBlanks(s), JSON.stringify(s)).toBe(want);
    }
  });
});

describe('Message-ID of a report or a submitted message', () => {
  it('strips the angle brackets and the white space inside them, also around a long run of it', () => {
    expect(bareMessageId(' < id@example.net > ')).toBe('id@example.net');
    expect(bareMessageId(`<${' '.repeat(100_000)}id@example.net${' '.repeat(100_000)}>`)).toBe('id@example.net');
    expect(bareMessageId(`<id@example.net${' '.repeat(100_000)}x>`)).toBeUndefined(); // too long to be an id
    expect(bareMessageId('<>')).toBeUndefined();
  });
});

describe('a remote reply full of "exceeded "', () => {
  it('is still a message too large when it says so, and the gap the rule allows is bounded', () => {
    expect(classifyRawReply(`550 5.7.1 ${'exceeded '.repeat(1_500)}message size`, 'message').rule).toBe('message-too-large');
    expect(classifyRawReply(`550 5.7.1 exceeded ${'x'.repeat(100)} message size`, 'rcpt').rule).not.toBe('message-too-large');
  });
});

describe('a reply longer than anyone writes', () => {
  it('is read up to MAX_REPLY_LENGTH: codes from its first line, the text cut there', () => {
    const reply = parseReply(`550-5.1.1 ${'a'.repeat(MAX_REPLY_LENGTH)}\r\n550 5.1.1 user unknown`);
    expect(reply).toMatchObject({ code: 550, enhancedCode: '5.1.1' });
    expect(reply.text.length).toBeLessThan(MAX_REPLY_LENGTH);
    expect(reply.text).not.toContain('user unknown');
  });
});

describe('the fast content reader of submitted mail', () => {
  it('reads a quoted-printable line with 100,000 blanks inside it as mailparser does', async () => {
    const raw = Buffer.from(`Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\na${blanks(100_000)}b ${blanks(100)}\r\nc=3D\r\n`);
    const fast = fastContent(splitMessage(raw));
    expect(fast?.text).toBe(`a${blanks(100_000)}b\nc=\n`);
    expect(fast?.text).toBe((await parsedContent(raw)).text);
  });

  it('decodes generated quoted-printable text as mailparser does (escapes anywhere, lone and short "=", soft breaks, blanks)', async () => {
    const next = rng(2045);
    const pieces = ['abc', ' ', '\t', '=', '=3D', '=3d', '=C3=A9', '=4', '=ZZ', '=\r\n', '\r\n', '=20', '==', 'x='];
    for (let i = 0; i < 150; i++) {
      const body = Array.from({ length: 1 + Math.floor(next() * 16) }, () => pieces[Math.floor(next() * pieces.length)]).join('');
      const raw = Buffer.from(`Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n${body}`);
      const fast = fastContent(splitMessage(raw));
      expect(fast?.text, JSON.stringify(body)).toBe((await parsedContent(raw)).text);
    }
  });

  it('reads a part with a line of "--" and 100,000 blanks as mailparser does', async () => {
    const line = `--${blanks(100_000)}x`;
    const raw = Buffer.from(
      [
        'Content-Type: multipart/alternative; boundary=b', '', `--b${blanks(10)}`, 'Content-Type: text/plain', '', line, '--b',
        'Content-Type: text/html', '', '<p>x</p>', '--b--', '',
      ].join('\r\n'),
    );
    const fast = fastContent(splitMessage(raw));
    expect(fast).toMatchObject({ text: line, html: '<p>x</p>' });
    const parsed = await parsedContent(raw);
    expect([fast?.text, fast?.html]).toEqual([parsed.text, parsed.html]);
  });
});

describe('lines over 998 octets in a multipart message', () => {
  it('re-encodes a part whose line is 50,000 boundary markers and keeps the delimiters', async () => {
    const line = '--b'.repeat(50_000);
    const raw = ['Content-Type: multipart/mixed; boundary=b', '', '--b', 'Content-Type: text/plain', '', line, '--b--', ''].join('\r\n');
    const out = joinMessage(fitLineLength(splitMessage(Buffer.from(raw, 'latin1'))));
    expect(longestLine(out)).toBeLessThanOrEqual(998);
    expect((await simpleParser(out)).text).toBe(line);
  });
});

describe('the size of a submitted header block', () => {
  it('is measured up to the blank line that ends it, CRLF or LF, and is all of a message without one', () => {
    const head = (n: number) => `X: ${'h'.repeat(n - 3)}\r\n`; // n octets before the line break
    expect(headerBlockExceeds(Buffer.from(`${head(100)}\r\nbody`.padEnd(1000, 'b')), 100)).toBe(false);
    expect(headerBlockExceeds(Buffer.from(`${head(101)}\r\nbody`.padEnd(1000, 'b')), 100)).toBe(true);
    expect(headerBlockExceeds(Buffer.from(`X: a\n\n${'b'.repeat(1000)}`), 100)).toBe(false);
    expect(headerBlockExceeds(Buffer.from('X: a\r\n'.repeat(1000)), 100)).toBe(true);
    expect(headerBlockExceeds(Buffer.from('X: a\r\n'.repeat(10)), 100)).toBe(false);
  });
});

describe('many parts with long lines', () => {
  it('refuses to re-encode a multipart of more than 1,000 parts, and the fast reader leaves a third part to mailparser', () => {
    const parts = '--b\r\n\r\nx\r\n'.repeat(1_001);
    const raw = `Content-Type: multipart/mixed; boundary=b\r\n\r\n${parts}--b\r\n\r\n${'x'.repeat(1_000)}\r\n--b--\r\n`;
    expect(() => fitLineLength(splitMessage(Buffer.from(raw)))).toThrow(/more than 1000 parts/);
    const three = `Content-Type: multipart/alternative; boundary=b\r\n\r\n${'--b\r\nContent-Type: text/plain\r\n\r\nx\r\n'.repeat(3)}--b--\r\n`;
    expect(fastContent(splitMessage(Buffer.from(three)))).toBeUndefined();
  });
});
