import { describe, expect, it } from 'vitest';
import { feedbackReport } from '../../src/inbound/arf.js';
import { dsnBounces } from '../../src/inbound/dsn.js';
import { MAX_PARAM_LENGTH, parseContentType } from '../../src/inbound/content-type.js';
import { MAX_HEADER_BYTES } from '../../src/domain/raw-headers.js';
import { addressOf, fieldBlocks, findReport, MAX_BLOCK_FIELDS, MAX_FIELD_LENGTH, MAX_FIELDS_TEXT, originalHeaders } from '../../src/inbound/report.js';
import { arf, dsn } from '../support/reports.js';

describe('report parsing', () => {
  it('reads the failed recipients of an RFC 3464 DSN and classifies them with the bounce rules', () => {
    const report = findReport(Buffer.from(dsn({ to: 'b@x.com', recipient: 'Ann@Example.net', messageIdHeader: '<m@x>', status: '5.1.1', diagnostic: '550 5.1.1 User unknown' })))!;
    expect(report.reportType).toBe('delivery-status');
    expect(dsnBounces(report)).toEqual([
      { recipient: 'ann@example.net', hard: true, category: 'unknown_user', status: '5.1.1', smtpCode: 550, diagnosticCode: '550 5.1.1 User unknown', reportingMta: 'mx.example.net' },
    ]);
    const full = findReport(Buffer.from(dsn({ to: 'b@x.com', recipient: 'a@y.net', messageIdHeader: '<m@x>', status: '5.2.2', diagnostic: '552 5.2.2 Mailbox full' })))!;
    expect(dsnBounces(full)[0]).toMatchObject({ hard: false, category: 'mailbox_full' });
  });

  it('finds a report nested in multipart/mixed and decodes a base64 delivery-status part', () => {
    const status = Buffer.from('Reporting-MTA: dns; mx.y.net\r\n\r\nFinal-Recipient: rfc822; a@y.net\r\nAction: failed\r\nStatus: 5.1.1\r\n').toString('base64');
    const raw = [
      'Content-Type: multipart/mixed; boundary=outer', '', '--outer',
      'Content-Type: multipart/report; report-type=delivery-status; boundary="in"', '', '--in', 'Content-Type: text/plain', '', 'failed', '--in',
      'Content-Type: message/delivery-status', 'Content-Transfer-Encoding: base64', '', status, '--in--', '--outer--', '',
    ].join('\r\n');
    expect(dsnBounces(findReport(Buffer.from(raw))!).map((b) => [b.recipient, b.hard])).toEqual([['a@y.net', true]]);
  });

  it('reads the feedback report fields of an RFC 5965 ARF message', () => {
    const report = findReport(Buffer.from(arf({ to: 'fbl@x.com', originalMailFrom: 'bounces+1@x.com', recipient: 'user@example.com', messageIdHeader: '<m@x>', originalTo: 'user@example.com' })))!;
    expect(report.reportType).toBe('feedback-report');
    expect(feedbackReport(report)).toMatchObject({ feedbackType: 'abuse', userAgent: 'SomeGenerator/1.0', originalMailFrom: 'bounces+1@x.com', originalRcptTo: 'user@example.com', sourceIp: '192.0.2.1' });
  });

  it('finds nothing in an ordinary message', () => {
    expect(findReport(Buffer.from('Subject: hi\r\n\r\nhello\r\n'))).toBeNull();
  });
});

/** "a@a@…a@ x": the Final-Recipient of issue 29 that held the old addressOf for 25 s at 4,000 characters. */
const atRun = (n: number) => `${'a@'.repeat(n)} x`;

/** The fixture's DSN with one field line replaced. */
function dsnWith(field: string, line: string): Buffer {
  const raw = dsn({ to: 'b@x.com', recipient: 'ann@example.net', messageIdHeader: '<m@x>', status: '5.1.1', diagnostic: '550 5.1.1 User unknown' });
  return Buffer.from(raw.replace(new RegExp(`^${field}:.*$`, 'm'), line));
}

describe('report parsing of pathological input (issue 29)', () => {
  it('reads no address from a typed field of "a@a@…a@ x", and the one at the end of a long field', () => {
    expect(addressOf(`rfc822; ${atRun(2_000)}`)).toBeUndefined();
    expect(addressOf(`rfc822; ${atRun(2_000)} <Ann@Example.net>`)).toBe('ann@example.net');
    expect(addressOf(`${' '.repeat(50_000)}<ann@example.net>${' '.repeat(50_000)}`)).toBe('ann@example.net');
  });

  it('reads no address longer than an SMTP path allows (RFC 5321 4.5.3.1.3)', () => {
    const longest = `${'a'.repeat(64)}@${'b'.repeat(185)}.net`;
    expect(longest).toHaveLength(254);
    expect(addressOf(`rfc822; ${longest}`)).toBe(longest);
    expect(addressOf(`rfc822; a${longest}`)).toBeUndefined();
    expect(addressOf(`rfc822; ${'a@'.repeat(2_000)}x`)).toBeUndefined();
  });

  it('bounces the Original-Recipient of a DSN whose Final-Recipient is "a@a@…a@ x" of 4,000 characters', () => {
    const report = findReport(dsnWith('Final-Recipient', `Final-Recipient: rfc822; ${atRun(2_000)}`))!;
    expect(dsnBounces(report).map((b) => [b.recipient, b.hard, b.status])).toEqual([['ann@example.net', true, '5.1.1']]);
  });

  it('bounces nobody when both recipient fields of a DSN are oversized', () => {
    const raw = dsnWith('Final-Recipient', `Final-Recipient: rfc822; ${atRun(2_000)}`).toString().replace(/^Original-Recipient:.*$/m, `Original-Recipient: rfc822;${atRun(2_000)}`);
    expect(dsnBounces(findReport(Buffer.from(raw))!)).toEqual([]);
  });

  it('leaves out a Diagnostic-Code longer than a report field may be and classifies by the Status', () => {
    const long = `550 5.1.1 ${'exceeded '.repeat(20_000)}`;
    const [bounce] = dsnBounces(findReport(dsnWith('Diagnostic-Code', `Diagnostic-Code: smtp; ${long}`))!);
    expect(bounce).toMatchObject({ recipient: 'ann@example.net', hard: true, category: 'unknown_user', status: '5.1.1' });
    expect(bounce.diagnosticCode).toBeUndefined();
  });

  it('reads no Original-Rcpt-To of "a@a@…a@ x" from an ARF report and drops its oversized fields', () => {
    const raw = arf({ to: 'fbl@x.com', recipient: 'user@example.com', messageIdHeader: '<m@x>', originalTo: 'user@example.com' })
      .replace(/^Original-Rcpt-To:.*$/m, `Original-Rcpt-To: ${atRun(2_000)}`)
      .replace(/^User-Agent:.*$/m, `User-Agent: ${'x'.repeat(MAX_FIELD_LENGTH + 1)}`);
    const fb = feedbackReport(findReport(Buffer.from(raw))!);
    expect(fb).toMatchObject({ feedbackType: 'abuse', sourceIp: '192.0.2.1' });
    expect(fb?.originalRcptTo).toBeUndefined();
    expect(fb?.userAgent).toBeUndefined();
  });

  it('drops a field folded over 20,000 lines and keeps the others of its block', () => {
    const text = `Action: failed\nDiagnostic-Code: smtp; 550${'\n x'.repeat(20_000)}\nStatus: 5.1.1\n`;
    expect(fieldBlocks(text)).toEqual([{ action: 'failed', status: '5.1.1' }]);
  });

  it('reads at most MAX_BLOCK_FIELDS fields of a block, and no block of a part over MAX_FIELDS_TEXT', () => {
    const many = Array.from({ length: MAX_BLOCK_FIELDS + 5 }, (_, i) => `F${i}: x`).join('\n');
    const [block] = fieldBlocks(`${many}\n\nAction: failed\n`.replace('F0:', 'Action:'));
    expect(Object.keys(block)).toHaveLength(MAX_BLOCK_FIELDS);
    expect(fieldBlocks(`Action: failed\n${'\n'.repeat(MAX_FIELDS_TEXT)}`)).toEqual([]);
  });

  it('reads no report out of a message or part whose header block is over 64 KiB', () => {
    const raw = dsn({ to: 'b@x.com', recipient: 'ann@example.net', messageIdHeader: '<m@x>', status: '5.1.1', diagnostic: '550 5.1.1 User unknown' });
    expect(findReport(Buffer.from(`X-Pad: ${'p'.repeat(MAX_HEADER_BYTES)}\r\n${raw}`))).toBeNull();
    const original = raw.replace('Subject: Order', `Subject: ${'o'.repeat(MAX_HEADER_BYTES)}`);
    const report = findReport(Buffer.from(original))!;
    expect(dsnBounces(report).map((b) => b.recipient)).toEqual(['ann@example.net']);
    expect(originalHeaders(report)).toBeUndefined();
  });

  it('reads the parameters around a 96 KB run of word characters in Content-Type', () => {
    const run = 'a'.repeat(96_000);
    expect(parseContentType(`text/plain; ${run}`)).toEqual({ type: 'text/plain', params: {} });
    expect(parseContentType(`multipart/report; ${run}; report-type=delivery-status; boundary="b\\"c"; ${'-'.repeat(96_000)}`)).toEqual({
      type: 'multipart/report',
      params: { 'report-type': 'delivery-status', boundary: 'b"c' },
    });
    expect(parseContentType(`text/plain; charset="${'\\'.repeat(96_000)}`)).toEqual({ type: 'text/plain', params: {} });
  });

  it('ignores a MIME parameter longer than any a report needs', () => {
    const long = 'b'.repeat(MAX_PARAM_LENGTH + 1);
    expect(parseContentType(`multipart/report; boundary=${long}; report-type=delivery-status`).params).toEqual({ 'report-type': 'delivery-status' });
    expect(parseContentType(`multipart/report; ${long}=x; report-type=delivery-status`).params).toEqual({ 'report-type': 'delivery-status' });
  });

  it('finds no report in a plain mail with a 96 KB Content-Type', () => {
    expect(findReport(Buffer.from(`Content-Type: text/plain; ${'a'.repeat(96_000)}\r\n\r\nhello\r\n`))).toBeNull();
  });
});
