/**
 * TLS-RPT by mail: the mailto: rua address check (the URI comes from a third party's DNS) and
 * the RFC 8460 5.3 message built around a report, read back with mailparser.
 */
import { gunzipSync, gzipSync } from 'node:zlib';
import { simpleParser } from 'mailparser';
import { describe, expect, it } from 'vitest';
import { mailtoRecipient } from '../../src/tls-rpt/mailto.js';
import { composeReportMail } from '../../src/tls-rpt/report-mail.js';

describe('mailtoRecipient', () => {
  it.each([
    ['mailto:tlsrpt@rcpt-mail.net', 'tlsrpt@rcpt-mail.net'],
    ['MAILTO:TLS.Reports@Rcpt-Mail.NET', 'TLS.Reports@rcpt-mail.net'],
    ['mailto:tls%2Brpt@rcpt-mail.net', 'tls+rpt@rcpt-mail.net'],
    ['mailto:tlsrpt@rcpt-mail.net?subject=ignored', 'tlsrpt@rcpt-mail.net'],
  ])('%s is %s', (uri, email) => {
    expect(mailtoRecipient(uri)).toEqual({ ok: true, email });
  });

  it.each([
    ['percent-encoded CRLF and a header', 'mailto:tls@rcpt-mail.net%0D%0ABcc:%20victim@elsewhere-mail.net'],
    ['a literal CRLF', 'mailto:tls@rcpt-mail.net\r\nBcc: victim@elsewhere-mail.net'],
    ['a literal LF before the @', 'mailto:tls\n@rcpt-mail.net'],
    ['two addresses', 'mailto:a@rcpt-mail.net%2Cb@rcpt-mail.net'],
    ['a display name', 'mailto:Reports%20%3Ctls@rcpt-mail.net%3E'],
    ['a quoted local part', 'mailto:%22a%20b%22@rcpt-mail.net'],
    ['no @', 'mailto:not-an-address'],
    ['no address', 'mailto:?to=tls@rcpt-mail.net'],
    ['an invalid domain', 'mailto:tls@rcpt_mail'],
    ['percent relaying', 'mailto:tls%25other@rcpt-mail.net'],
    ['a broken escape', 'mailto:tls%E0%A4%A@rcpt-mail.net'],
    ['another scheme', 'https://rcpt-mail.net/tlsrpt'],
  ])('refuses %s', (_name, uri) => {
    const r = mailtoRecipient(uri);
    expect(r.ok).toBe(false);
  });
});

describe('composeReportMail', () => {
  const json = { 'organization-name': 'Postrider Test', 'report-id': '2025-01-06_rcpt-mail.net_0f0e' };
  const input = {
    from: 'tlsrpt@sender-mail.net',
    to: 'tls@rcpt-mail.net',
    submitter: 'mta.sender-mail.net',
    organizationName: 'Postrider Test',
    policyDomain: 'rcpt-mail.net',
    reportId: '2025-01-06_rcpt-mail.net_0f0e',
    day: '2025-01-06',
    gzip: gzipSync(Buffer.from(JSON.stringify(json))),
    date: new Date(Date.UTC(2025, 0, 7, 0, 30)),
  };

  it('is a multipart/report; report-type=tlsrpt with the RFC 8460 5.3 fields, a text part and the gzipped report', async () => {
    const raw = await composeReportMail(input);
    const head = raw.toString('latin1').split('\r\n\r\n')[0];
    expect(head).toMatch(/^TLS-Report-Domain: rcpt-mail\.net$/m);
    expect(head).toMatch(/^TLS-Report-Submitter: mta\.sender-mail\.net$/m);
    expect(raw.toString('latin1')).not.toMatch(/[^\r]\n/);
    const mail = await simpleParser(raw);
    expect(mail.headers.get('content-type')).toMatchObject({ value: 'multipart/report', params: { 'report-type': 'tlsrpt' } });
    expect(mail.subject).toBe('Report Domain: rcpt-mail.net Submitter: mta.sender-mail.net Report-ID: <2025-01-06_rcpt-mail.net_0f0e@mta.sender-mail.net>');
    expect(mail.from?.value).toEqual([{ address: 'tlsrpt@sender-mail.net', name: '' }]);
    expect(mail.text).toContain('Policy domain: rcpt-mail.net');
    expect(mail.attachments).toHaveLength(1);
    const [att] = mail.attachments;
    expect(att.contentType).toBe('application/tlsrpt+gzip');
    expect(att.contentDisposition).toBe('attachment');
    expect(att.filename).toBe('mta.sender-mail.net!rcpt-mail.net!1736121600!1736207999!2025-01-06rcpt-mailnet0f0e.json.gz');
    expect(JSON.parse(gunzipSync(att.content).toString('utf8'))).toEqual(json);
  });

  it('refuses values that cannot go into a header field as they are', async () => {
    await expect(composeReportMail({ ...input, policyDomain: 'rcpt-mail.net\r\nBcc: x@elsewhere-mail.net' })).rejects.toThrow(/header field/);
  });
});
