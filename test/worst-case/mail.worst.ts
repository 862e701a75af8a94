/**
 * Parsers of mail and SMTP text from outside, each on its generated worst case at the largest size
 * its caller lets through (issue 29, item 1).
 *
 * Sizes: the inbound listener (port 25, no authentication) takes messages of up to INBOUND octets
 * (src/inbound/listener.ts), and everything in a report is parsed from one of them. Submitted
 * mail is at most smtp.maxMessageSize (default SUBMISSION), and its header block at most
 * MAX_HEADER_BYTES (src/domain/raw-headers.ts). A remote MX's reply is at most REPLY: nodemailer's
 * SMTP client closes the connection past it (MAX_RESPONSE_SIZE).
 */
import { describe, expect, it } from 'vitest';
import { classifyRawReply, parseReply } from '../../src/domain/smtp-reply.js';
import { fieldValue, malformedFields, MAX_HEADER_BYTES, splitMessage, unfoldedUtf8Value } from '../../src/domain/raw-headers.js';
import { normalizeEmail } from '../../src/domain/address.js';
import { feedbackReport } from '../../src/inbound/arf.js';
import { parseContentType } from '../../src/inbound/content-type.js';
import { dsnBounces } from '../../src/inbound/dsn.js';
import { addressOf, fieldBlocks, findReport, originalHeaders } from '../../src/inbound/report.js';
import { bareMessageId } from '../../src/domain/message-id.js';
import { fitLineLength } from '../../src/submission/line-length.js';
import { parseMailboxList } from '../../src/submission/mailbox-list.js';
import { fastContent } from '../../src/submission/raw-content.js';
import { arf, dsn } from '../support/reports.js';
import { MiB, repeatTo, withinBudget } from '../support/worst-case.js';

const INBOUND = 10 * MiB;
const SUBMISSION = 25 * MiB;
const REPLY = MiB;
/** Room for the rest of a message around one generated field. */
const FIELD = INBOUND - 4096;

/** The fixture's DSN with one field line replaced by `line`. */
function dsnWith(field: string, line: string): Buffer {
  const raw = dsn({ to: 'b@x.com', recipient: 'ann@example.net', messageIdHeader: '<m@x>', status: '5.1.1', diagnostic: '550 5.1.1 User unknown' });
  return Buffer.from(raw.replace(new RegExp(`^${field}:.*$`, 'm'), () => line), 'latin1');
}

/** The fixture's ARF report with the last line of this field (the embedded original's, for To) replaced by `line`. */
function arfWith(field: string, line: string): Buffer {
  const raw = arf({ to: 'fbl@x.com', originalMailFrom: 'bounces+1@x.com', recipient: 'user@example.com', messageIdHeader: '<m@x>', originalTo: 'user@example.com', returnPath: 'bounces+1@x.com' });
  const at = raw.lastIndexOf(`\n${field}:`) + 1;
  return Buffer.from(raw.slice(0, at) + line + raw.slice(raw.indexOf('\r\n', at)), 'latin1');
}

/** Generated field values: long runs of what each quantifier of the old expressions accepted. */
const VALUES: [string, (n: number) => string][] = [
  ['"a@a@…a@ x"', (n) => `${repeatTo('a@', n - 2)} x`],
  ['"a@a@…" with no end', (n) => repeatTo('a@', n)],
  ['a run of word characters', (n) => repeatTo('a', n)],
  ['white space between two characters', (n) => `a${' '.repeat(n - 2)}b`],
  ['"<" and ">" repeated', (n) => repeatTo('<a@b>', n)],
  ['";" repeated', (n) => repeatTo('a@b;', n)],
  ['name=" without a closing quote', (n) => repeatTo('a="\\', n)],
  ['name= pairs', (n) => repeatTo('a=b ', n)],
  ['"exceeded " repeated', (n) => repeatTo('exceeded ', n)],
];

describe('inbound reports (RFC 3464 DSN, RFC 5965 ARF) at the listener\'s 10 MiB', () => {
  it.each(VALUES)('addressOf, bareMessageId and parseContentType on a header field: %s', (what, make) => {
    // Header fields reach them from header blocks of at most MAX_HEADER_BYTES (larger ones are not read).
    const value = make(MAX_HEADER_BYTES);
    withinBudget(`addressOf: ${what}`, () => addressOf(`rfc822; ${value}`));
    withinBudget(`bareMessageId: ${what}`, () => bareMessageId(`<${value}>`));
    withinBudget(`parseContentType: ${what}`, () => parseContentType(`multipart/report; ${value}`));
  });

  it.each(VALUES)('a DSN whose Final-Recipient, Diagnostic-Code and Action are %s', (what, make) => {
    for (const field of ['Final-Recipient', 'Diagnostic-Code', 'Action']) {
      const raw = dsnWith(field, `${field}: ${make(FIELD)}`);
      withinBudget(`DSN ${field}: ${what}`, () => dsnBounces(findReport(raw)!));
    }
  });

  it.each(VALUES)('an ARF report whose Original-Rcpt-To, Original-Mail-From and embedded To and Message-ID are %s', (what, make) => {
    for (const field of ['Original-Rcpt-To', 'Original-Mail-From', 'To', 'Message-ID', 'Return-Path']) {
      const raw = arfWith(field, `${field}: ${make(FIELD)}`);
      const keys = withinBudget(`ARF ${field}: ${what}`, () => {
        const report = findReport(raw)!;
        const original = originalHeaders(report);
        return [feedbackReport(report), original && addressOf(fieldValue(original, 'To')), original && addressOf(fieldValue(original, 'Return-Path')), original && bareMessageId(fieldValue(original, 'Message-ID'))];
      });
      // A feedback-report part over MAX_FIELDS_TEXT is not read; an oversized original is left out.
      expect((keys[0] as ReturnType<typeof feedbackReport>)?.feedbackType ?? null).toBe(field.startsWith('Original-') ? null : 'abuse');
    }
  });

  it.each(VALUES)('a plain mail whose Content-Type is %s', (what, make) => {
    const raw = Buffer.from(`Content-Type: text/plain; ${make(FIELD)}\r\n\r\nhello\r\n`, 'latin1');
    expect(withinBudget(`findReport: Content-Type ${what}`, () => findReport(raw))).toBeNull();
  });

  it.each([
    ['blank lines', repeatTo('\n', FIELD)],
    ['fields without a value', repeatTo('a:\n', FIELD)],
    ['one field folded over millions of lines', `Diagnostic-Code: x${repeatTo('\n x', FIELD)}`],
    ['distinct field names', Array.from({ length: FIELD / 12 }, (_, i) => `f${i}: x`).join('\n')],
  ])('report field blocks of %s', (what, text) => {
    withinBudget(`fieldBlocks: ${what}`, () => fieldBlocks(text));
  });

  it.each([
    ['folded lines', `X: a${repeatTo('\r\n b', INBOUND)}\r\n\r\n`],
    ['header lines', `${repeatTo('X: a\r\n', INBOUND)}\r\n`],
    ['bare CRs', `X: ${repeatTo('\r', INBOUND)}\r\n\r\n`],
    ['nested multipart parts', `Content-Type: multipart/mixed; boundary=b\r\n\r\n${repeatTo('--b\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n', INBOUND)}`],
  ])('the MIME walk over %s', (what, text) => {
    const raw = Buffer.from(text, 'latin1');
    withinBudget(`findReport: ${what}`, () => findReport(raw));
  });
});

describe('a remote MX\'s reply at the SMTP client\'s 1 MiB', () => {
  it.each([
    ['"exceeded " repeated', `550 5.7.1 ${repeatTo('exceeded ', REPLY)}`],
    ['"doesn\'t have a " repeated', `550 ${repeatTo("doesn't have a ", REPLY)}`],
    ['words and spaces', `550 ${repeatTo('a ', REPLY)}`],
    ['white space between two characters', `550 a${' '.repeat(REPLY)}b`],
    ['empty continuation lines', `${repeatTo('550-\r\n', REPLY)}550 x`],
    ['enhanced codes on every line', `${repeatTo('550-5.1.1 x\r\n', REPLY)}550 5.1.1 x`],
    ['a run of digits and dots', `550 ${repeatTo('5.', REPLY)}`],
  ])('%s', (what, reply) => {
    withinBudget(`parseReply: ${what}`, () => parseReply(reply));
    for (const phase of ['rcpt', 'message', 'greeting'] as const) withinBudget(`classifyRawReply(${phase}): ${what}`, () => classifyRawReply(reply, phase));
  });
});

/**
 * Budget for a pass over a whole 25 MiB body: linear work over that many characters in JavaScript
 * (decoding, splitting lines) takes a few hundred milliseconds here; the superlinear code it
 * replaced took hours at this size, so the check still fails such code by orders of magnitude.
 */
const BODY_BUDGET_MS = 1500;

describe('submitted mail at smtp.maxMessageSize (header block at most 64 KiB)', () => {
  const header = (text: string) => Buffer.from(`${text}\r\n\r\nbody\r\n`, 'latin1');
  it.each([
    ['folded lines', `X: a${repeatTo('\r\n b', MAX_HEADER_BYTES)}`],
    ['header lines', repeatTo('X: a\r\n', MAX_HEADER_BYTES).trimEnd()],
    ['one long field', `From: ${repeatTo('a@b,', MAX_HEADER_BYTES)}`],
    ['lines without a colon', repeatTo('abc\r\n', MAX_HEADER_BYTES).trimEnd()],
  ])('the header block: %s', (what, text) => {
    const raw = header(text);
    withinBudget(`splitMessage etc.: ${what}`, () => {
      const m = splitMessage(raw);
      return [malformedFields(m), m.fields.map(unfoldedUtf8Value).length, fieldValue(m, 'Message-ID')];
    });
  });

  it.each([
    ['addresses', repeatTo('a@b.example, ', MAX_HEADER_BYTES)],
    ['display names', repeatTo('"a" <a@b.example>, ', MAX_HEADER_BYTES)],
    ['comments', repeatTo('(a)', MAX_HEADER_BYTES)],
    ['"@" repeated', repeatTo('@', MAX_HEADER_BYTES)],
    ['an unterminated quoted string', `"${repeatTo('\\a', MAX_HEADER_BYTES)}`],
  ])('a From field of %s', (what, value) => {
    withinBudget(`parseMailboxList: ${what}`, () => parseMailboxList(value));
    withinBudget(`normalizeEmail: ${what}`, () => normalizeEmail(value));
  });

  it.each([
    ['To of addresses', `To: ${repeatTo('a@b.example,', MAX_HEADER_BYTES - 10)}\r\n\r\nx`],
    ['Content-Type parameters', `Content-Type: text/plain; ${repeatTo('a=b; ', MAX_HEADER_BYTES - 30)}\r\n\r\nx`],
    ['quoted-printable blanks inside a line', `Content-Type: text/plain\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\na${' '.repeat(SUBMISSION)}b`],
    ['"--" lines of blanks', `Content-Type: multipart/alternative; boundary=b\r\n\r\n--b\r\n\r\n--${' '.repeat(SUBMISSION / 2)}x\r\n--${' '.repeat(SUBMISSION / 2)}x\r\n--b--\r\n`],
    ['delimiter lines', `Content-Type: multipart/alternative; boundary=b\r\n\r\n${repeatTo('--b\r\n', SUBMISSION)}--b--\r\n`],
  ])('the fast content reader on %s', (what, text) => {
    const raw = Buffer.from(text, 'latin1');
    const msg = splitMessage(raw);
    withinBudget(`fastContent: ${what}`, () => fastContent(msg), raw.length > MAX_HEADER_BYTES * 2 ? BODY_BUDGET_MS : undefined);
  });

  it.each([
    ['a line of boundary markers', `Content-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\n\r\n${repeatTo('--b', SUBMISSION)}\r\n--b--\r\n`],
    ['many short parts and a long line', `Content-Type: multipart/mixed; boundary=b\r\n\r\n${repeatTo('--b\r\n\r\nx\r\n', SUBMISSION / 2)}--b\r\n\r\n${'x'.repeat(2000)}\r\n--b--\r\n`],
  ])('the line-length fitter on %s', (what, text) => {
    const msg = splitMessage(Buffer.from(text, 'latin1'));
    withinBudget(
      `fitLineLength: ${what}`,
      () => {
        try {
          return fitLineLength(msg);
        } catch (err) {
          return err; // a refusal is a result too
        }
      },
      BODY_BUDGET_MS,
    );
  });
});
