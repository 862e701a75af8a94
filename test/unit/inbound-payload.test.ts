/**
 * inboundPayload (src/inbound/payload.ts): a received message as the JSON a route's URL gets,
 * for mail built by nodemailer's composer and for the bad input of issue 33, each of which must
 * end as a payload (with `parseError` where the body could not be read), never a throw.
 */
import { gzipSync } from 'node:zlib';
import type Mail from 'nodemailer/lib/mailer/index.js';
import MailComposer from 'nodemailer/lib/mail-composer/index.js';
import { describe, expect, it } from 'vitest';
import { DEFAULT_PARSE_LIMITS } from '../../src/inbound/parse-received.js';
import { inboundPayload, type InboundPayloadInput } from '../../src/inbound/payload.js';
import { MAX_FILENAME } from '../../src/inbound/payload-fields.js';
import type { AuthVerdicts } from '../../src/inbound/verify.js';

const AUTH: AuthVerdicts = {
  spf: { result: 'pass', domain: 'example.org' },
  dkim: [{ domain: 'example.org', selector: 's1', result: 'pass' }],
  dmarc: { result: 'pass', domain: 'example.org', policy: 'reject' },
  arc: { result: 'none' },
};

const compose = (mail: Mail.Options): Promise<Buffer> => new MailComposer(mail).compile().build();

function payloadOf(raw: Buffer | string, o: Partial<InboundPayloadInput> = {}) {
  return inboundPayload({
    id: 'in_1',
    routeId: 'rt_1',
    receivedAt: new Date('2024-05-06T10:00:05Z'),
    envelope: { mailFrom: 'ann@example.org', rcptTo: ['support+4711@inbound.test'] },
    raw: typeof raw === 'string' ? Buffer.from(raw, 'latin1') : raw,
    auth: AUTH,
    mailboxHash: '4711',
    attachmentInlineMax: 1024,
    attachmentUrl: (index) => `https://postrider.test/inbound/messages/in_1/attachments/${index}`,
    ...o,
  });
}

describe('the payload of a well-formed message', () => {
  it('carries the envelope, the addresses, the fields, both bodies, the reply\'s new text and the verdicts', async () => {
    const raw = await compose({
      from: 'Ann Müller <ann@example.org>',
      to: ['Support <support+4711@inbound.test>', 'other@inbound.test'],
      cc: 'Bob <bob@example.net>',
      replyTo: 'replies@example.org',
      subject: 'Re: Grüße aus Köln ✓',
      date: new Date('2024-05-06T10:00:00Z'),
      messageId: '<reply-1@example.org>',
      inReplyTo: '<orig-1@inbound.test>',
      references: ['<orig-0@inbound.test>', '<orig-1@inbound.test>'],
      text: 'Danke, es geht wieder. 日本語\n\nOn Mon, 6 May 2024, Support <support@inbound.test> wrote:\n> Bitte neu starten.\n',
      html: '<p>Danke, es geht wieder. 日本語</p>',
    });
    const p = await payloadOf(raw);
    expect(p).toMatchObject({
      id: 'in_1',
      routeId: 'rt_1',
      receivedAt: '2024-05-06T10:00:05.000Z',
      envelope: { mailFrom: 'ann@example.org', rcptTo: ['support+4711@inbound.test'] },
      from: { address: 'ann@example.org', name: 'Ann Müller' },
      to: [{ address: 'support+4711@inbound.test', name: 'Support' }, { address: 'other@inbound.test', name: '' }],
      cc: [{ address: 'bob@example.net', name: 'Bob' }],
      replyTo: [{ address: 'replies@example.org', name: '' }],
      subject: 'Re: Grüße aus Köln ✓',
      date: '2024-05-06T10:00:00.000Z',
      messageId: '<reply-1@example.org>',
      inReplyTo: '<orig-1@inbound.test>',
      references: ['<orig-0@inbound.test>', '<orig-1@inbound.test>'],
      mailboxHash: '4711',
      html: '<p>Danke, es geht wieder. 日本語</p>',
      strippedTextReply: 'Danke, es geht wieder. 日本語',
      attachments: [],
      auth: AUTH,
      parseError: null,
    });
    expect(p.text).toContain('> Bitte neu starten.');
    expect(p.headers.map((h) => h.name)).toEqual(expect.arrayContaining(['From', 'To', 'Cc', 'Subject', 'Message-ID', 'Content-Type']));
    expect(p.headers.find((h) => h.name === 'Subject')!.value).toMatch(/^=\?UTF-8\?/); // as sent: decoded in `subject`
    expect(JSON.parse(JSON.stringify(p))).toEqual(p);
  });

  it('inlines an attachment up to the limit in base64 and links a larger one, each with its name, type, size and Content-ID, in MIME order', async () => {
    const small = Buffer.from('%PDF-1.4 tiny');
    const large = Buffer.alloc(4096, 7);
    const raw = await compose({
      from: 'ann@example.org',
      to: 'support@inbound.test',
      subject: 'files',
      text: 'see attached',
      html: '<img src="cid:logo@example.org">',
      attachments: [
        { filename: 'Rechnung März.pdf', content: small, contentType: 'application/pdf' },
        { filename: 'logo.png', content: large, contentType: 'image/png', cid: 'logo@example.org' },
      ],
    });
    const p = await payloadOf(raw);
    // The composer puts the image beside the HTML (multipart/related) before the PDF.
    expect(p.attachments).toEqual([
      { filename: 'logo.png', contentType: 'image/png', size: 4096, contentId: 'logo@example.org', url: 'https://postrider.test/inbound/messages/in_1/attachments/0' },
      { filename: 'Rechnung März.pdf', contentType: 'application/pdf', size: small.length, contentId: null, content: small.toString('base64') },
    ]);
    expect(p.html).toContain('cid:logo@example.org'); // not replaced by a data: URL
  });
});

describe('bad input ends as a payload', () => {
  it('reads malformed MIME: a multipart without boundary, an unterminated one, broken base64 and an unknown charset', async () => {
    const noBoundary = await payloadOf('From: a@example.org\r\nSubject: one\r\nContent-Type: multipart/mixed\r\n\r\n--x\r\nhello\r\n');
    expect(noBoundary).toMatchObject({ subject: 'one', from: { address: 'a@example.org' } });
    const unterminated = await payloadOf(
      'From: a@example.org\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\nContent-Type: text/plain; charset=x-no-such-charset\r\n\r\nhi there\r\n--b\r\nContent-Type: application/zip\r\nContent-Transfer-Encoding: base64\r\n\r\n@@@not base64!!!\r\n',
    );
    expect(unterminated.text).toContain('hi there');
    expect(unterminated.attachments).toHaveLength(1);
    expect(unterminated.parseError).toBeNull();
  });

  it('gives from null for a message without From, and for a From without an address', async () => {
    expect((await payloadOf('To: b@example.org\r\nSubject: x\r\n\r\nbody\r\n')).from).toBeNull();
    expect((await payloadOf('From: <<<@@@>>> ;;; "unterminated\r\nSubject: x\r\n\r\nbody\r\n')).from).toBeNull();
    expect((await payloadOf('From: undisclosed-recipients:;\r\n\r\nbody\r\n')).from).toBeNull();
  });

  it('reads 8-bit header text as UTF-8, and keeps bytes that are not UTF-8 as one character each', async () => {
    const raw = Buffer.concat([
      Buffer.from('From: Jörg Ünal <joerg@example.org>\r\nSubject: Grüße, 日本語\r\n', 'utf8'),
      Buffer.from('X-Latin1: caf\xe9\r\n\r\nbody\r\n', 'latin1'),
    ]);
    const p = await payloadOf(raw);
    expect(p.subject).toBe('Grüße, 日本語');
    expect(p.from).toEqual({ address: 'joerg@example.org', name: 'Jörg Ünal' });
    expect(p.headers.find((h) => h.name === 'Subject')!.value).toBe('Grüße, 日本語');
    expect(p.headers.find((h) => h.name === 'X-Latin1')!.value).toBe('caf\xe9');
  });

  it('gives a Subject sent in raw Latin-1 bytes as its header field reads, its letters kept, and decodes encoded-words beside them', async () => {
    const raw = Buffer.from('From: a@example.org\r\nSubject: Gr\xfc\xdfe aus K\xf6ln =?UTF-8?Q?=E2=9C=93?=\r\n\r\nbody\r\n', 'latin1');
    const p = await payloadOf(raw);
    expect(p.headers.find((h) => h.name === 'Subject')!.value).toBe('Grüße aus Köln =?UTF-8?Q?=E2=9C=93?=');
    expect(p.subject).toBe('Grüße aus Köln ✓');
    expect((await payloadOf('From: a@example.org\r\nSubject: \r\n\r\nbody\r\n')).subject).toBeNull();
  });

  it('gives display names sent in raw Latin-1 bytes their letters (windows-1252, as WHATWG reads "latin1"), UTF-8 and encoded-word names as before', async () => {
    const raw = Buffer.from(
      [
        'From: J\xf6rg M\xfcller \x96 Vertrieb <joerg@example.de>',
        'To: "Fran\xe7oise" <fr@example.fr>, team: R\xe9mi <remi@example.fr>;',
        'To: =?ISO-8859-1?Q?J=F6rg?= <j2@example.de>',
        'Cc: =?UTF-8?B?' + Buffer.from('Zoë ✓').toString('base64') + '?= <zoe@example.org>',
        'Reply-To: B\xfcro\r\n <buero@example.de>',
        'Subject: x',
        '',
        'body',
        '',
      ].join('\r\n'),
      'latin1',
    );
    const p = await payloadOf(raw);
    // 0x96 is an en dash in windows-1252 (a C1 control in ISO-8859-1).
    expect(p.from).toEqual({ address: 'joerg@example.de', name: 'Jörg Müller – Vertrieb' });
    expect(p.headers.find((h) => h.name === 'From')!.value).toBe('Jörg Müller – Vertrieb <joerg@example.de>');
    expect(p.to).toEqual([
      { address: 'fr@example.fr', name: 'Françoise' },
      { address: 'remi@example.fr', name: 'Rémi' },
      { address: 'j2@example.de', name: 'Jörg' },
    ]);
    expect(p.cc).toEqual([{ address: 'zoe@example.org', name: 'Zoë ✓' }]);
    expect(p.replyTo).toEqual([{ address: 'buero@example.de', name: 'Büro' }]);
    // A field that is UTF-8 stays UTF-8 (RFC 6532) beside one that is not.
    const mixed = Buffer.concat([
      Buffer.from('From: Jörg Müller <joerg@example.de>\r\n', 'utf8'),
      Buffer.from('To: J\xf6rg <j@example.de>\r\nSubject: \x80 5\r\n\r\nbody\r\n', 'latin1'),
    ]);
    const q = await payloadOf(mixed);
    expect([q.from!.name, q.to[0].name, q.subject]).toEqual(['Jörg Müller', 'Jörg', '€ 5']);
  });

  it('links a 25 MB attachment instead of inlining it', async () => {
    const big = Buffer.alloc(25 * 1024 * 1024, 0x41);
    const raw = await compose({ from: 'ann@example.org', to: 'support@inbound.test', subject: 'big', text: 'here', attachments: [{ filename: 'big.bin', content: big }] });
    const p = await payloadOf(raw, { attachmentInlineMax: 10 * 1024 * 1024 });
    expect(p.parseError).toBeNull();
    expect(p.attachments).toEqual([{ filename: 'big.bin', contentType: 'application/octet-stream', size: big.length, contentId: null, url: expect.stringMatching(/\/attachments\/0$/) }]);
    expect(p.text).toBe('here');
  }, 60_000);

  it('stops reading at the parts cap for 10,000 tiny parts and still gives the header fields', async () => {
    const parts = Array.from({ length: 10_000 }, (_, i) => `--b\r\nContent-Type: application/octet-stream; name=p${i}\r\n\r\nx\r\n`).join('');
    const p = await payloadOf(`From: a@example.org\r\nSubject: parts\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n${parts}--b--\r\n`);
    expect(p).toMatchObject({ from: { address: 'a@example.org' }, subject: 'parts', text: null, attachments: [] });
    expect(p.parseError).toMatch(new RegExp(`at most ${DEFAULT_PARSE_LIMITS.maxParts} parts`));
  });

  it('reads a message whose lines end in a bare LF', async () => {
    const p = await payloadOf('From: Ann <ann@example.org>\nSubject: bare\nContent-Type: text/plain; charset=utf-8\n\nline one\nline two\n');
    expect(p).toMatchObject({ from: { address: 'ann@example.org', name: 'Ann' }, subject: 'bare', parseError: null });
    expect(p.text).toMatch(/^line one\r?\nline two/);
  });

  it('makes a plain, bounded name of a hostile attachment name and never unpacks a compressed bomb', async () => {
    const bomb = gzipSync(Buffer.alloc(64 * 1024 * 1024)); // 64 MiB of zeros in about 64 KiB
    const raw = await compose({
      from: 'a@example.org',
      to: 'support@inbound.test',
      text: 'x',
      attachments: [
        { filename: `../../../etc/${'A'.repeat(10_000)}.zip`, content: bomb, contentType: 'application/zip' },
        { filename: '..\\..\\boot.ini\u0000.exe', content: 'x' },
      ],
    });
    const p = await payloadOf(raw, { attachmentInlineMax: 1024 * 1024 });
    expect(p.attachments[0].filename).toBe(`${'A'.repeat(MAX_FILENAME - 4)}.zip`);
    expect(p.attachments[0].size).toBe(bomb.length);
    expect(Buffer.from(p.attachments[0].content!, 'base64').equals(bomb)).toBe(true);
    expect(p.attachments[1].filename).toBe('boot.ini.exe');
  });

  it('gives no fields but a parse error for a header block past the limit', async () => {
    const p = await payloadOf(`From: a@example.org\r\nX-Long: ${'a'.repeat(DEFAULT_PARSE_LIMITS.maxHeadBytes)}\r\n\r\nbody\r\n`);
    expect(p).toMatchObject({ from: null, subject: null, headers: [], text: null, attachments: [] });
    expect(p.parseError).toMatch(/header/);
  });

  it('gives no fields for a header block past the limit by one or two octets, before a CRLF or a bare-LF blank line', async () => {
    const limits = { ...DEFAULT_PARSE_LIMITS, maxBytes: 1000, maxHeadBytes: 200 };
    for (const [eol, over] of [['\r\n', 1], ['\n', 1], ['\n', 2]] as const) {
      // "Subject: " and its value: 200 + over octets before the blank line.
      const p = await payloadOf(`Subject: ${'a'.repeat(191 + over)}${eol}${eol}${'x'.repeat(2000)}`, { limits });
      expect([eol, over, p.subject, p.parseError]).toEqual([eol, over, null, expect.stringMatching(/; its header block is over 200 bytes$/)]);
    }
  });

  it('reads only the header block of a message past the size limit', async () => {
    const limits = { ...DEFAULT_PARSE_LIMITS, maxBytes: 1000 };
    const p = await payloadOf(`From: a@example.org\r\nSubject: huge\r\n\r\n${'x'.repeat(2000)}\r\n`, { limits });
    expect(p).toMatchObject({ from: { address: 'a@example.org' }, subject: 'huge', text: null });
    expect(p.parseError).toMatch(/over 1000 bytes/);
  });

  it('gives date null for a Date field that does not parse, rather than the time of parsing', async () => {
    expect((await payloadOf('From: a@example.org\r\nDate: yesterday-ish\r\n\r\nx\r\n')).date).toBeNull();
  });
});
