import { PassThrough } from 'node:stream';
import MailComposer from 'nodemailer/lib/mail-composer/index.js';
import type { MailComposerAttachment, MailComposerOptions } from 'nodemailer/lib/mail-composer/index.js';
import { describe, expect, it } from 'vitest';
import { mimeBytes } from '../../src/workers/mime-bytes.js';
import { rng } from '../support/random.js';

// Pieces chosen for the encoders' edge cases: spaces and tabs before line ends, lone CR and LF,
// '=' (QP's escape), non-ASCII (QP or base64 by their share), long lines (no 7bit), dots.
const PIECES = [
  'Hello', ' ', '  ', '\t', '\n', '\r\n', '\r', '=', '=3D', '.', 'ä', 'Grüße', '日本語', '😀', '<p>', '</p>',
  'a'.repeat(80), 'word '.repeat(30), '\u0000', '\u007f', '-- ', 'From ', '\n.\n',
];

function text(rand: () => number, parts: number): string {
  let s = '';
  for (let i = 0; i < parts; i++) s += PIECES[Math.floor(rand() * PIECES.length)];
  return s;
}

function bytes(rand: () => number, n: number): Buffer {
  return Buffer.from(Array.from({ length: n }, () => Math.floor(rand() * 256)));
}

function attachment(rand: () => number, i: number): MailComposerAttachment {
  const kind = Math.floor(rand() * 4);
  const att: MailComposerAttachment =
    kind === 0 ? { filename: `f${i}.bin`, content: bytes(rand, Math.floor(rand() * 3000)) }
    : kind === 1 ? { filename: `notes ${i}.txt`, content: Buffer.from(text(rand, 40)) }
    : kind === 2 ? { filename: `ünïcode-${i}.csv`, content: text(rand, 20), contentType: 'text/csv' }
    : { filename: `img${i}.png`, content: bytes(rand, 200), cid: `img${i}@x`, contentDisposition: 'inline' };
  return att;
}

function options(seed: number): MailComposerOptions {
  const rand = rng(seed);
  const o: MailComposerOptions = {
    from: { name: rand() < 0.5 ? 'Shop' : 'Grüße, Shop', address: 'a@example.com' },
    to: [{ name: '', address: 'b@example.org' }],
    subject: text(rand, 5),
    messageId: `<m${seed}@example.com>`,
    date: new Date(Date.UTC(2024, 0, 2, 3, 4, 5)),
    headers: rand() < 0.3 ? { 'X-Tag': text(rand, 3).replace(/[\r\n]/g, ' ') } : {},
    newline: 'windows',
    baseBoundary: `b${seed}`,
    disableFileAccess: true,
    disableUrlAccess: true,
  };
  const shape = rand();
  if (shape < 0.8) o.text = text(rand, Math.floor(rand() * 200));
  if (shape > 0.3) o.html = text(rand, Math.floor(rand() * 200));
  if (rand() < 0.35) o.attachments = Array.from({ length: 1 + Math.floor(rand() * 3) }, (_, i) => attachment(rand, i));
  return o;
}

/** Both writers on two trees compiled from the same options (writing changes a tree). */
async function both(o: MailComposerOptions): Promise<{ streamed: Buffer; direct: Buffer | null }> {
  const streamed = await new MailComposer(o).compile().build();
  const direct = mimeBytes(new MailComposer(o).compile());
  return { streamed, direct };
}

describe('mimeBytes', () => {
  it("writes MimeNode.build()'s bytes for 400 generated messages (text, html, attachments, inline parts)", async () => {
    for (let seed = 1; seed <= 400; seed++) {
      const { streamed, direct } = await both(options(seed));
      expect(direct, `seed ${seed}`).not.toBeNull();
      expect(direct!.equals(streamed), `seed ${seed}`).toBe(true);
    }
  });

  it('writes the same bytes for parts larger than the QP encoder slice (64 KiB) and empty parts', async () => {
    const long = 'Grüße = a line with trailing space \n'.repeat(3000);
    for (const o of [
      { ...options(1), text: long, html: `<p>${long}</p>`, attachments: [{ filename: 'big.bin', content: Buffer.alloc(100_000, 7) }] },
      { ...options(2), text: '', html: undefined, attachments: [] },
      { ...options(3), text: undefined, html: undefined, attachments: [] },
      { ...options(4), text: 'x'.repeat(1000), html: '' },
    ]) {
      const { streamed, direct } = await both(o);
      expect(direct!.equals(streamed)).toBe(true);
    }
  });

  it('gives null for a tree it does not write (stream content, LF line ends) and leaves the tree to build()', async () => {
    const stream = new PassThrough();
    stream.end('streamed body');
    const root = new MailComposer({ ...options(5), attachments: [{ filename: 's.txt', content: stream }] }).compile();
    expect(mimeBytes(root)).toBeNull();
    expect((await root.build()).toString()).toContain(Buffer.from('streamed body').toString('base64'));

    expect(mimeBytes(new MailComposer({ ...options(6), newline: 'unix' }).compile())).toBeNull();
  });
});
