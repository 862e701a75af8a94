import MailComposer from 'nodemailer/lib/mail-composer/index.js';
import type Mail from 'nodemailer/lib/mailer/index.js';
import { describe, expect, it } from 'vitest';
import { MAIN_THREAD_MAX_PARTS } from '../../src/domain/mime-parts.js';
import { splitMessage } from '../../src/domain/raw-headers.js';
import { fastContent, PARSE_HERE_MAX_BYTES, parsedContent, rawContent } from '../../src/submission/raw-content.js';

const compose = (mail: Mail.Options): Promise<Buffer> => new MailComposer(mail).compile().build();

const base = { from: 'App <app@example.com>', to: 'Ann Example <ann@example.net>', subject: 'Your receipt' };
const LONG = 'Thank you for your order 10234 placed on 2 March. '.repeat(12);

/** Messages of the two shapes the fast path reads; mailparser must read them the same way. */
const FAST: [string, Mail.Options][] = [
  ['text only', { ...base, text: 'Hello\nworld\n' }],
  ['html only', { ...base, html: '<p>Hello</p>' }],
  ['text and html', { ...base, text: `${LONG}\nsecond line`, html: `<p style="a:b">${LONG}</p>` }],
  ['quoted-printable UTF-8 and an encoded subject', { ...base, subject: 'Grüße — ✓', text: 'Grüße aus Köln = 100 %\n', html: '<p>Grüße</p>' }],
  ['base64 (mostly non-ASCII)', { ...base, text: 'Καλημέρα κόσμε '.repeat(20), html: '<p>Καλημέρα</p>', textEncoding: 'base64' }],
  ['to, cc and reply-to lists', { ...base, to: ['a@example.net', '"Last, First" <b@example.net>'], cc: 'c@example.org', replyTo: 'Help <help@example.com>', text: 't' }],
  ['no trailing line break, trailing spaces', { ...base, text: 'ends here   \nx  ', html: '<b>x</b>\n\n' }],
  ['no subject', { from: base.from, to: base.to, text: 'x' }],
  ['an empty html part', { ...base, html: '' }],
  ['an empty text part beside html', { ...base, text: '', html: '<p>x</p>' }],
];

/** Shapes it leaves to mailparser. */
const SLOW: [string, Mail.Options][] = [
  ['an attachment', { ...base, text: 't', attachments: [{ filename: 'a.txt', content: 'abc' }] }],
  ['an encoded display name', { ...base, to: '"Jürgen" <j@example.net>', text: 't' }],
  ['an internationalized domain', { ...base, to: 'x@xn--bcher-kva.example', text: 't' }],
];

describe('reading an SMTP message for activity (raw-content.ts)', () => {
  for (const [name, mail] of FAST) {
    it(`reads ${name} without mailparser, as mailparser does`, async () => {
      const raw = await compose(mail);
      const fast = fastContent(splitMessage(raw));
      expect(fast).toBeDefined();
      expect(fast).toEqual(await parsedContent(raw));
    });
  }

  for (const [name, mail] of SLOW) {
    it(`leaves a message with ${name} to mailparser`, async () => {
      const raw = await compose(mail);
      const elsewhere = () => Promise.reject(new Error('a small message is parsed on this thread'));
      expect(await rawContent(raw, splitMessage(raw), elsewhere)).toEqual(await parsedContent(raw));
    });
  }

  it(`hands a message over ${PARSE_HERE_MAX_BYTES} bytes that the fast path does not read to the parser given, and only such a one`, async () => {
    const handed: number[] = [];
    const elsewhere = async (raw: Buffer) => {
      handed.push(raw.length);
      return parsedContent(raw);
    };
    const big = await compose({ ...base, text: 't', attachments: [{ filename: 'a.bin', content: Buffer.alloc(PARSE_HERE_MAX_BYTES, 7) }] });
    expect(await rawContent(big, splitMessage(big), elsewhere)).toMatchObject({ attachments: [{ fileName: 'a.bin', size: PARSE_HERE_MAX_BYTES }] });
    const longText = await compose({ ...base, text: 'a line of text\n'.repeat(PARSE_HERE_MAX_BYTES / 10) });
    expect(fastContent(splitMessage(longText))).toBeDefined();
    await rawContent(longText, splitMessage(longText), elsewhere);
    expect(handed).toEqual([big.length]);
  });

  it(`hands a small message of more than ${MAIN_THREAD_MAX_PARTS} parts to the parser given: mailparser's time grows with the parts`, async () => {
    const handed: number[] = [];
    const elsewhere = async (raw: Buffer) => {
      handed.push(raw.length);
      return parsedContent(raw);
    };
    const attachments = (n: number) => Array.from({ length: n }, (_, i) => ({ filename: `${i}.txt`, content: 'x' }));
    const many = await compose({ ...base, text: 't', attachments: attachments(MAIN_THREAD_MAX_PARTS + 1) });
    const few = await compose({ ...base, text: 't', attachments: attachments(MAIN_THREAD_MAX_PARTS - 2) });
    expect(many.length).toBeLessThan(PARSE_HERE_MAX_BYTES);
    expect((await rawContent(many, splitMessage(many), elsewhere)).attachments).toHaveLength(MAIN_THREAD_MAX_PARTS + 1);
    expect((await rawContent(few, splitMessage(few), elsewhere)).attachments).toHaveLength(MAIN_THREAD_MAX_PARTS - 2);
    expect(handed).toEqual([many.length]);
  });

  it('leaves nested multiparts, groups, other charsets and format=flowed to mailparser', () => {
    const msg = (head: string, body: string) => splitMessage(Buffer.from(`${head}\r\n\r\n${body}`, 'latin1'));
    expect(fastContent(msg('To: friends: a@example.net;\r\nSubject: s', 'x'))).toBeUndefined();
    expect(fastContent(msg('Content-Type: text/plain; format=flowed', 'x'))).toBeUndefined();
    expect(fastContent(msg('Content-Type: text/plain; charset=iso-8859-1', 'caf\xe9'))).toBeUndefined();
    const nested = 'Content-Type: multipart/alternative; boundary=b';
    expect(fastContent(msg(nested, '--b\r\nContent-Type: multipart/mixed; boundary=c\r\n\r\n--c--\r\n--b--\r\n'))).toBeUndefined();
    expect(fastContent(msg(nested, '--b\r\nContent-Type: text/plain\r\n\r\nno close delimiter\r\n'))).toBeUndefined();
  });

  it('decodes quoted-printable as mailparser does: either case of hex, soft breaks, a lone or short "="', async () => {
    const raw = Buffer.from(
      'From: a@example.com\r\nTo: b@example.net\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n' +
        'caf=c3=a9 and caf=C3=A9, =ZZ and =3d and 100 =\r\n% soft   \r\ntrailing =4\r\nlast=',
      'latin1',
    );
    const fast = fastContent(splitMessage(raw));
    expect(fast).toBeDefined();
    expect(fast).toEqual(await parsedContent(raw));
  });

  it('reads hand-written MIME with LF line ends, a preamble and an epilogue as mailparser does', async () => {
    const raw = Buffer.from(
      'From: a@example.com\nTo: b@example.net\nSubject: =?UTF-8?Q?caf=C3=A9?=\n  folded\nContent-Type: multipart/alternative;\n boundary="xx"\n\n' +
        'preamble\n--xx\nContent-Type: text/plain\n\nplain\n\n--xx \nContent-Type: text/html; charset="us-ascii"\nContent-Transfer-Encoding: 7bit\n\n<p>h</p>\n--xx--\nepilogue\n',
      'latin1',
    );
    const fast = fastContent(splitMessage(raw));
    expect(fast).toBeDefined();
    expect(fast).toEqual(await parsedContent(raw));
  });

  it('reads 8bit UTF-8 parts of a multipart, and an empty part body, as mailparser does', async () => {
    const raw = Buffer.from(
      'From: a@example.com\r\nTo: b@example.net\r\nContent-Type: multipart/alternative; boundary=b1\r\n\r\n' +
        '--b1\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\nGrüße aus Köln ✓\r\nzweite Zeile\r\n' +
        '--b1\r\nContent-Type: text/html; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\n' +
        '--b1--\r\n',
      'utf8',
    );
    const fast = fastContent(splitMessage(raw));
    expect(fast).toEqual({ subject: '', to: [{ email: 'b@example.net' }], cc: [], replyTo: [], attachments: [], text: 'Grüße aus Köln ✓\nzweite Zeile' });
    expect(fast).toEqual(await parsedContent(raw));
  });
});
