import { describe, expect, it } from 'vitest';
import { feedbackReport } from '../../src/inbound/arf.js';
import { dsnBounces } from '../../src/inbound/dsn.js';
import { findReport } from '../../src/inbound/report.js';
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
