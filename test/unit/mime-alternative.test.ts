import MailComposer from 'nodemailer/lib/mail-composer/index.js';
import type { MailComposerOptions } from 'nodemailer/lib/mail-composer/index.js';
import { describe, expect, it } from 'vitest';
import { alternativeBytes } from '../../src/workers/mime-alternative.js';
import { rng } from '../support/random.js';

// The encoders' and the encoding choice's edge cases: trailing spaces, lone CR and LF, '=',
// non-Latin text (base64 when it is most of the part), long lines (no 7bit), control characters.
const PIECES = [
  'Hello', ' ', '  ', '\t', '\n', '\r\n', '\r', '=', '.', 'ä', 'Grüße', '日本語の本文', 'Ελληνικά', '😀', '<p>', '</p>',
  'a'.repeat(80), 'word '.repeat(30), '\u0001', '\u007f', '-- ', '\n.\n', 'https://example.com/?a=1&b=2',
];
const NAMES = ['', 'Ann', 'Ann Example', 'Example, Inc.', 'Zoë Zweite', '"Quoted"', 'a@b', '日本', 'x'.repeat(90), 'Semi;colon'];
const SUBJECTS = ['Hi', 'Your receipt for order 10234', 'Grüße aus Köln', `${'long subject '.repeat(12)}end`, '=?utf-8?Q?x?=', '😀 emoji'];

function pick<T>(rand: () => number, list: readonly T[]): T {
  return list[Math.floor(rand() * list.length)]!;
}

function text(rand: () => number): string {
  let s = 'x';
  const n = 1 + Math.floor(rand() * 150);
  for (let i = 0; i < n; i++) s += pick(rand, PIECES);
  return s;
}

function options(seed: number): MailComposerOptions {
  const rand = rng(seed);
  const address = (i: number) => ({ name: pick(rand, NAMES), address: `${pick(rand, ['a', 'ann.example', 'b+tag'])}${i}@${pick(rand, ['example.org', 'bücher.example', 'sub.example.com'])}` });
  const headers: Record<string, string> = {};
  if (rand() < 0.4) headers['X-Campaign'] = pick(rand, ['spring', 'Grüße', 'a '.repeat(60)]);
  if (rand() < 0.3) headers['List-Unsubscribe'] = '<https://example.com/unsubscribe?token=' + 'abc'.repeat(30) + '>, <mailto:u@example.com?subject=unsubscribe>';
  if (rand() < 0.2) headers['List-Unsubscribe-Post'] = 'List-Unsubscribe=One-Click';
  const o: MailComposerOptions = {
    from: address(0),
    to: Array.from({ length: 1 + Math.floor(rand() * 3) }, (_, i) => address(i + 1)),
    subject: pick(rand, SUBJECTS),
    messageId: `<m${seed}-${'y'.repeat(Math.floor(rand() * 40))}@example.com>`,
    date: new Date(Date.UTC(2024, 0, 2, 3, 4, 5) + seed * 1000),
    headers,
    newline: 'windows',
    disableFileAccess: true,
    disableUrlAccess: true,
    text: text(rand),
    html: text(rand),
  };
  if (rand() < 0.5) o.baseBoundary = `b${seed}`;
  if (rand() < 0.3) o.cc = [address(9)];
  if (rand() < 0.3) o.replyTo = [address(8)];
  if (rand() < 0.2) o.attachments = [];
  return o;
}

describe('alternativeBytes', () => {
  it("writes MailComposer's bytes for 400 generated text and html messages", async () => {
    for (let seed = 1; seed <= 400; seed++) {
      const o = options(seed);
      if (!o.baseBoundary) o.baseBoundary = `random${seed}`; // both sides must draw the same boundary
      const ours = alternativeBytes(o);
      const theirs = await new MailComposer(o).compile().build();
      expect(ours, `seed ${seed}`).not.toBeNull();
      expect(ours!.toString('latin1'), `seed ${seed}`).toBe(theirs.toString('latin1'));
    }
  });

  it('writes the same bytes for each transfer encoding of a part: 7bit, quoted-printable, base64', async () => {
    const parts = ['Plain short text\nin two lines\n', 'Grüße, a Latin text with some umlauts: äöü', '日本語のテキストだけ', 'a'.repeat(100)];
    for (const text of parts) {
      for (const html of parts) {
        const o = { ...options(7), baseBoundary: 'fixed', text, html };
        expect(alternativeBytes(o)!.toString('latin1')).toBe((await new MailComposer(o).compile().build()).toString('latin1'));
      }
    }
  });

  it('leaves every other message to MailComposer: one part, an attachment, options it does not read', () => {
    const o = options(1);
    expect(alternativeBytes({ ...o, text: undefined })).toBeNull();
    expect(alternativeBytes({ ...o, html: '' })).toBeNull();
    expect(alternativeBytes({ ...o, attachments: [{ filename: 'a.txt', content: 'a' }] })).toBeNull();
    expect(alternativeBytes({ ...o, amp: '<p>amp</p>' })).toBeNull();
    expect(alternativeBytes({ ...o, textEncoding: 'base64' })).toBeNull();
    expect(alternativeBytes({ ...o, html: Buffer.from('<p>buffer</p>') })).toBeNull();
    expect(alternativeBytes({ ...o, newline: 'unix' })).toBeNull();
  });
});
