/** TLS-RPT (RFC 8460): the _smtp._tls record, the report's JSON and gzip form, the in-memory recorder. */
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { TlsRptRecorder, utcDay } from '../../src/tls-rpt/recorder.js';
import { buildReport, gzipReport, reportFilename } from '../../src/tls-rpt/report.js';
import { MAX_RUA_URIS, parseTlsRptRecords } from '../../src/tls-rpt/txt.js';

describe('_smtp._tls record (RFC 8460 3)', () => {
  it('reads the rua URIs of the one v=TLSRPTv1 record, ignoring other records and unknown fields', () => {
    expect(parseTlsRptRecords(['v=spf1 -all', 'v=TLSRPTv1; rua=mailto:tls@example.com, https://r.example.com/tlsrpt ;ext=1;'])).toEqual({
      ok: true,
      rua: ['mailto:tls@example.com', 'https://r.example.com/tlsrpt'],
    });
  });

  it('keeps the first MAX_RUA_URIS distinct URIs of a long rua, so a domain cannot have a report sent to thousands', () => {
    const many = Array.from({ length: 20_000 }, (_, i) => `mailto:r${i % 7}@b.example`).join(',');
    expect(parseTlsRptRecords([`v=TLSRPTv1; rua=${many}`])).toEqual({ ok: true, rua: ['mailto:r0@b.example', 'mailto:r1@b.example', 'mailto:r2@b.example', 'mailto:r3@b.example', 'mailto:r4@b.example'] });
    expect(MAX_RUA_URIS).toBe(5);
    expect(parseTlsRptRecords(['v=TLSRPTv1; rua=https://a.example/r, https://a.example/r'])).toEqual({ ok: true, rua: ['https://a.example/r'] });
  });

  it.each([
    [[], 'no record'],
    [['v=TLSRPTv2; rua=mailto:a@b.example'], 'no record'],
    [['v=TLSRPTv1'], 'no record'],
    [['v=TLSRPTv1; ruf=mailto:a@b.example'], 'no rua'],
    [['v=TLSRPTv1; rua=ftp://b.example/x'], 'no mailto: or https:'],
    [['v=TLSRPTv1; rua=mailto:a@b.example', 'v=TLSRPTv1; rua=mailto:c@d.example'], 'not exactly one'],
  ])('takes no reports for %j', (records, reason) => {
    const r = parseTlsRptRecords(records);
    expect(r.ok).toBe(false);
    expect(r.ok ? '' : r.reason).toContain(reason);
  });
});

describe('the report (RFC 8460 4.4)', () => {
  const sts = { type: 'sts' as const, string: ['version: STSv1', 'mode: testing', 'mx: *.mail.company-y.example', 'max_age: 86400'], mxHost: '*.mail.company-y.example' };

  it('has the field names and shape of the RFC 8460 4.4 example, and survives gzip', () => {
    const report = buildReport({ organizationName: 'Company-X', contactInfo: 'sts-reporting@company-x.example', reportId: 'r-1', day: '2016-04-01', policyDomain: 'company-y.example' }, [
      {
        day: '2016-04-01',
        policyDomain: 'company-y.example',
        policy: sts,
        success: 5326,
        failures: [
          { failure: { type: 'certificate-expired', sendingMtaIp: '2001:db8:abcd:0012::1', receivingMxHostname: 'mx1.mail.company-y.example' }, count: 100 },
          { failure: { type: 'validation-failure', sendingMtaIp: '198.51.100.62', receivingIp: '203.0.113.58', receivingMxHostname: 'mx-backup.mail.company-y.example', failureReasonCode: 'X509_V_ERR_PROXY_PATH_LENGTH_EXCEEDED' }, count: 3 },
        ],
      },
    ]);
    const expected = {
      'organization-name': 'Company-X',
      'date-range': { 'start-datetime': '2016-04-01T00:00:00Z', 'end-datetime': '2016-04-01T23:59:59Z' },
      'contact-info': 'sts-reporting@company-x.example',
      'report-id': 'r-1',
      policies: [
        {
          policy: { 'policy-type': 'sts', 'policy-string': sts.string, 'policy-domain': 'company-y.example', 'mx-host': '*.mail.company-y.example' },
          summary: { 'total-successful-session-count': 5326, 'total-failure-session-count': 103 },
          'failure-details': [
            { 'result-type': 'certificate-expired', 'sending-mta-ip': '2001:db8:abcd:0012::1', 'receiving-mx-hostname': 'mx1.mail.company-y.example', 'failed-session-count': 100 },
            {
              'result-type': 'validation-failure',
              'sending-mta-ip': '198.51.100.62',
              'receiving-mx-hostname': 'mx-backup.mail.company-y.example',
              'receiving-ip': '203.0.113.58',
              'failed-session-count': 3,
              'failure-reason-code': 'X509_V_ERR_PROXY_PATH_LENGTH_EXCEEDED',
            },
          ],
        },
      ],
    };
    expect(report).toEqual(expected);
    expect(JSON.parse(gunzipSync(gzipReport(report)).toString('utf8'))).toEqual(expected);
  });

  it('leaves out failure-details, policy-string and mx-host where there are none (no-policy-found)', () => {
    const report = buildReport({ organizationName: 'o', contactInfo: 'c', reportId: 'r', day: '2025-01-06', policyDomain: 'd.example' }, [
      { day: '2025-01-06', policyDomain: 'd.example', policy: { type: 'no-policy-found' }, success: 2, failures: [] },
    ]);
    expect(report.policies).toEqual([
      { policy: { 'policy-type': 'no-policy-found', 'policy-domain': 'd.example' }, summary: { 'total-successful-session-count': 2, 'total-failure-session-count': 0 } },
    ]);
  });

  it('names the file as RFC 8460 5.1 says', () => {
    expect(reportFilename('mail.sender.example', 'company-y.example', '2016-04-01', 'r-1')).toBe('mail.sender.example!company-y.example!1459468800!1459555199!r-1.json.gz');
  });
});

describe('TlsRptRecorder', () => {
  const at = Date.UTC(2025, 0, 6, 23, 59, 59);

  it('sums by UTC day, policy domain, policy and failure detail, and forgets what it drained', () => {
    const r = new TlsRptRecorder();
    const policy = { type: 'sts' as const, string: ['version: STSv1'], mxHost: 'mx.d.example' };
    for (let i = 0; i < 1000; i++) r.record({ policyDomain: 'D.example.', policy, result: 'success' }, at);
    for (let i = 0; i < 7; i++) r.record({ policyDomain: 'd.example', policy, result: { type: 'starttls-not-supported', receivingMxHostname: 'MX.d.example' } }, at);
    r.record({ policyDomain: 'd.example', policy: { type: 'no-policy-found' }, result: 'success' }, at + 1000);
    expect(r.size).toBe(2);
    const batch = r.drain();
    expect(batch).toEqual([
      { day: '2025-01-06', policyDomain: 'd.example', policy, success: 1000, failures: [{ failure: { type: 'starttls-not-supported', receivingMxHostname: 'mx.d.example' }, count: 7 }] },
      { day: '2025-01-07', policyDomain: 'd.example', policy: { type: 'no-policy-found' }, success: 1, failures: [] },
    ]);
    expect(r.drain()).toEqual([]);
    r.restore(batch);
    expect(r.drain()).toEqual(batch);
    expect(utcDay(at)).toBe('2025-01-06');
  });
});
