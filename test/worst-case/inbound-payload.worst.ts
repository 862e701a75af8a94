/**
 * The readers of a received message for an inbound route (issue 33), on generated worst cases at
 * the sizes their limits let through: the header block at MAX_HEADER_BYTES (parse-received.ts
 * refuses more), the text at the whole message, the MIME structure up to the parts cap.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { MAX_HEADER_BYTES } from '../../src/domain/raw-headers.js';
import { DEFAULT_PARSE_LIMITS, parseReceived } from '../../src/inbound/parse-received.js';
import { headerList, headerText, safeFilename } from '../../src/inbound/payload-fields.js';
import { inboundPayload, type InboundPayloadInput } from '../../src/inbound/payload.js';
import { capSignatureFields } from '../../src/inbound/signature-fields.js';
import { strippedTextReply } from '../../src/inbound/stripped-reply.js';
import { MiB, repeatTo, withinBudget, withinBudgetAsync } from '../support/worst-case.js';

const TEXT = 10 * MiB;
/** A header block just under the limit, made of `unit` repeated. */
const headerBlock = (unit: string) => repeatTo(unit, MAX_HEADER_BYTES - 64).replace(/[^\n]*$/, '');

/**
 * mailsplit (mailparser's splitter) counts every header line, with its line end, as at least 64
 * bytes against maxHeadSize, and the blank line that ends the block as its own bytes
 * (HEADER_LINE_MIN_COST in @zone-eu/mailsplit's lib/mime-node.js, MimeNode#addHeaderChunk). A
 * block of shorter lines is refused long before MAX_HEADER_BYTES of text: a case made of them
 * times the refusal, not a parse.
 */
const LINE_MIN_COST = 64;
/** What mailsplit counts for `block` (lines ending in LF) and the CRLF blank line after it. */
const mailsplitCost = (block: string) => block.split(/(?<=\n)/).reduce((sum, line) => sum + Math.max(line.length, LINE_MIN_COST), 0) + 2;
/** `text` as a header line of LINE_MIN_COST bytes or more with its CRLF: mailsplit counts it as it is. */
const costedLine = (text: string) => `${text.padEnd(LINE_MIN_COST - 2)}\r\n`;
/** The fields in a header block: its lines that do not continue the one before (RFC 5322 2.2.3). */
const fieldCount = (block: string) => block.split('\r\n').filter((line) => /^[^ \t]/.test(line)).length;

// mailparser is loaded once per process: the budgets are for reading, not for loading it.
beforeAll(async () => {
  await import('mailparser');
});

describe('strippedTextReply on 10 MiB of text', () => {
  const TEXTS: [string, string][] = [
    ['lines starting "On" without "wrote:"', repeatTo('On Monday, a and b and c\n', TEXT)],
    ['one line of "On " repeated', repeatTo('On ', TEXT)],
    ['white space that does not end the text', `${' '.repeat(TEXT - 1)}x`],
    ['quoted lines', repeatTo('> > > quoted\n', TEXT)],
    ['underscore rules without From', repeatTo('__________\nnot from\n', TEXT)],
    ['lines ending in ":" that are no attribution', repeatTo('On a b c d e f g h i j k:\n', TEXT)],
    ['long lines starting "On" and ending in ":"', repeatTo(`On ${'wrote '.repeat(150)}:\n`, TEXT)],
  ];
  it.each(TEXTS)('%s', (what, text) => {
    withinBudget(`strippedTextReply: ${what}`, () => strippedTextReply(text));
  });
});

describe('the header fields of a received message', () => {
  it('headerText and safeFilename on 64 KiB of 8-bit text and slashes', () => {
    withinBudget('headerText', () => headerText(repeatTo('\xc3\xa9\xff', MAX_HEADER_BYTES)));
    withinBudget('safeFilename', () => safeFilename(repeatTo('../\\\x01', MAX_HEADER_BYTES)));
  });

  it('capSignatureFields on a header block of nothing but DKIM-Signature fields', () => {
    const raw = Buffer.from(`${headerBlock('DKIM-Signature: v=1; d=x; s=y; b=\r\n')}\r\nbody\r\n`, 'latin1');
    withinBudget('capSignatureFields', () => capSignatureFields(raw));
  });

  // Lines of 64 bytes (mailsplit's least count per line), as many as its count lets through: 1,023.
  it.each([
    ['one-byte fields', costedLine('a:')],
    ['folded continuation lines', costedLine('X: a') + costedLine(' ')],
    ['encoded words', costedLine(`Subject:${' =?UTF-8?Q?=C3=A9?='.repeat(3)}`)],
    ['address lists', costedLine('To: a@b, c@d, "e" <f@g>, h: i@j;, a@b, c@d, "e" <f@g>, h: i@j;')],
  ])('parseReceived and headerList on a header block of %s', async (what, unit) => {
    const block = headerBlock(unit);
    expect(mailsplitCost(block)).toBeLessThanOrEqual(MAX_HEADER_BYTES);
    expect(mailsplitCost(block)).toBeGreaterThan(MAX_HEADER_BYTES - 2 * unit.length);
    const raw = Buffer.from(`${block}\r\nbody\r\n`, 'latin1');
    const { mail, problem } = await withinBudgetAsync(`parseReceived: ${what}`, () => parseReceived(raw), 1000);
    // Read, not refused: every field came through.
    expect([problem, mail?.headerLines.length]).toEqual([null, fieldCount(block)]);
    withinBudget(`headerList: ${what}`, () => headerList(mail));
  });

  it.each([
    ['one-byte fields', 'a:\r\n'],
    ['folded continuation lines', 'X: a\r\n \r\n'],
    ['encoded words', 'Subject: =?UTF-8?Q?=C3=A9?= \r\n'],
    ['address lists', 'To: a@b, c@d, "e" <f@g>, h: i@j;\r\n'],
  ])('parseReceived refusing a header block of short lines, under 64 KiB but over mailsplit\'s count: %s', async (what, unit) => {
    const block = headerBlock(unit);
    expect(mailsplitCost(block)).toBeGreaterThan(MAX_HEADER_BYTES);
    const raw = Buffer.from(`${block}\r\nbody\r\n`, 'latin1');
    const { mail, problem } = await withinBudgetAsync(`parseReceived refusing: ${what}`, () => parseReceived(raw), 1000);
    expect(mail).toBeNull();
    expect(problem).toMatch(/its header block could not be read either: Max header size/);
  });

  // Lines of 64 bytes and more: mailsplit counts a shorter header line as 64 against maxHeadSize.
  const names = 'J\xf6rg M\xfcller <a@b.example>, "M\xfcller \x96 B\xfcro" <c@d.example>, e\xe9: f@g;,\r\n';
  it.each([
    ['many To fields', headerBlock(`To: ${names}`), 'Müller – Büro'],
    ['one To field folded', `To: x@y.example,\r\n${repeatTo(` ${names}`, MAX_HEADER_BYTES - 1024).replace(/[^\n]*$/, '')}`, 'Jörg Müller'],
  ])('inboundPayload on a header block of %s with raw Latin-1 names', async (what, block, second) => {
    // Each address field is parsed twice: by mailparser, and again from `headers` read as windows-1252 (addressesOf).
    const input: InboundPayloadInput = {
      id: 'in_1',
      routeId: 'rt_1',
      receivedAt: new Date(),
      envelope: { mailFrom: '', rcptTo: ['a@b.example'] },
      raw: Buffer.from(`${block}\r\nbody\r\n`, 'latin1'),
      auth: { spf: { result: 'none', domain: null }, dkim: [], dmarc: { result: 'none', domain: null, policy: null }, arc: { result: 'none' } },
      mailboxHash: null,
      attachmentInlineMax: 0,
      attachmentUrl: () => '',
    };
    const p = await withinBudgetAsync(`inboundPayload: ${what}`, () => inboundPayload(input), 1000);
    expect([p.parseError, p.to.length, p.to[1]?.name]).toEqual([null, 500, second]);
  });
});

describe('the MIME structure of a received message', () => {
  it('parseReceived on 10 MiB of one-line parts stops at the parts cap', async () => {
    const parts = repeatTo('--b\r\n\r\nx\r\n', TEXT);
    const raw = Buffer.from(`Content-Type: multipart/mixed; boundary=b\r\n\r\n${parts}`, 'latin1');
    const { problem } = await withinBudgetAsync('parseReceived: many parts', () => parseReceived(raw), 1000);
    expect(problem).toMatch(/Max allowed child nodes exceeded/);
  });

  it('parseReceived on parts nested as deep as the cap allows', async () => {
    // The cap counts every entity: depth multiparts and the text part inside the last one.
    const depth = DEFAULT_PARSE_LIMITS.maxParts - 1;
    const open = Array.from({ length: depth }, (_, i) => `Content-Type: multipart/mixed; boundary=b${i}\r\n\r\n--b${i}\r\n`).join('');
    const { mail, problem } = await withinBudgetAsync('parseReceived: nesting', () => parseReceived(Buffer.from(`${open}\r\nx\r\n`, 'latin1')), 1000);
    // Read, not refused at the cap.
    expect([problem, mail?.text]).toEqual([null, 'x\n']);
  });
});
