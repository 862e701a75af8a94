/**
 * An MTA-STS policy announced but not to be had, told to TLS-RPT (RFC 8460 4.3.2.2; issue 21): a
 * real daemon sends through the API to an smtp-server MX host on 127.0.45.2; the `_mta-sts` TXT
 * records come from the dns2 test server and the policy host (test/support/mta-sts-server.ts)
 * answers 500 or serves a body that is no policy. Delivery goes on as RFC 8461 5 says (the
 * cached policy, else none); the day's TLS-RPT report carries the failure under policy-type sts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildReport, type TlsRptJson } from '../../src/tls-rpt/report.js';
import { firstAttempt as sendAndReadFirstAttempt, type Attempt } from '../support/attempts.js';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import { startDnsServer, type TestDns } from '../support/dns-server.js';
import { startPolicyServer, stsDeliverySettings, type PolicyServer } from '../support/mta-sts-server.js';
import { startMxServer, type MxServer } from '../support/mx-server.js';
import { setupSender, type Sender } from '../support/sending.js';
import { waitFor } from '../support/wait.js';

let dns: TestDns;
let policies: PolicyServer;
let mx: MxServer;
let t: TestDaemon;
let s: Sender;

const MX_HOST = 'mx.policy-trouble-mail.net';

/** A recipient domain whose one MX host is MX_HOST, announcing an MTA-STS policy of id `id`. */
function domainAnnouncing(domain: string, id: string): void {
  dns.set(domain, 'MX', [`10 ${MX_HOST}`]);
  dns.set(`_mta-sts.${domain}`, 'TXT', [`v=STSv1; id=${id};`]);
  dns.set(`mta-sts.${domain}`, 'A', ['127.0.0.1']);
}

function policyText(mode: string): string {
  return ['version: STSv1', `mode: ${mode}`, `mx: ${MX_HOST}`, 'max_age: 86400', ''].join('\r\n');
}

/** The day's report for `domain`, built from the stored counts as the TLS-RPT service builds it. */
async function todaysReport(domain: string, until: (r: TlsRptJson) => boolean): Promise<TlsRptJson> {
  const day = new Date().toISOString().slice(0, 10);
  return waitFor(
    async () => {
      await t.daemon.tlsRpt.flush();
      const report = buildReport({ organizationName: 'postrider', contactInfo: 'tlsrpt@postrider.net', reportId: 'r1', day, policyDomain: domain }, await t.daemon.store.tlsRpt.counts(day, domain));
      return until(report) && report;
    },
    { what: `the TLS-RPT report of ${domain}` },
  );
}

type PolicyEntry = TlsRptJson['policies'][number];

function failuresOf(report: TlsRptJson, type: string): { entry: PolicyEntry; detail: Record<string, string | number> }[] {
  return report.policies.flatMap((entry) => (entry['failure-details'] ?? []).filter((d) => d['result-type'] === type).map((detail) => ({ entry, detail })));
}

const firstAttempt = (to: string): Promise<Attempt> => sendAndReadFirstAttempt(t, s, to, 'MTA-STS TLS-RPT');

beforeAll(async () => {
  dns = await startDnsServer();
  policies = await startPolicyServer();
  mx = await startMxServer({ address: '127.0.45.2', tlsOptions: policies.issue(MX_HOST) });
  dns.set(MX_HOST, 'A', ['127.0.45.2']);
  t = await startDaemon(stsDeliverySettings(dns.address, policies, mx.port));
  s = await setupSender(t, dns);
});

afterAll(async () => {
  await t?.stop();
  await Promise.all([mx?.close(), policies?.close(), dns?.close()]);
});

describe('an announced MTA-STS policy that cannot be had, in TLS-RPT', () => {
  it('policy host answers 500, no cached policy: delivered without a policy, one sts-policy-fetch-error per attempt', async () => {
    domainAnnouncing('policy-down-mail.net', 'down1');
    policies.answer('mta-sts.policy-down-mail.net', { status: 500, body: 'internal error' });

    const first = await firstAttempt('ann@policy-down-mail.net');
    expect(first).toMatchObject({ outcome: 'delivered', mx: MX_HOST, tls: true });
    expect(first.mtaSts).toBeUndefined();
    // Within FETCH_RETRY_MS the id is not fetched again, but the attempt still goes without it.
    expect(await firstAttempt('bob@policy-down-mail.net')).toMatchObject({ outcome: 'delivered' });
    expect(policies.requests.get('mta-sts.policy-down-mail.net')).toBe(1);

    const report = await todaysReport('policy-down-mail.net', (r) => failuresOf(r, 'sts-policy-fetch-error')[0]?.detail['failed-session-count'] === 2);
    const [{ entry, detail }] = failuresOf(report, 'sts-policy-fetch-error');
    expect(entry.policy).toEqual({ 'policy-type': 'sts', 'policy-domain': 'policy-down-mail.net' });
    expect(entry.summary).toEqual({ 'total-successful-session-count': 0, 'total-failure-session-count': 2 });
    expect(detail).toEqual({ 'result-type': 'sts-policy-fetch-error', 'failed-session-count': 2, 'failure-reason-code': expect.stringMatching(/answered HTTP 500/) });
    // The TLS sessions themselves (one: the second message may reuse the connection) were held to no policy.
    expect(report.policies.find((p) => p.policy['policy-type'] === 'no-policy-found')?.summary).toMatchObject({ 'total-failure-session-count': 0 });
  });

  it('policy host serves garbage: sts-policy-invalid', async () => {
    domainAnnouncing('policy-garbled-mail.net', 'garbled1');
    policies.answer('mta-sts.policy-garbled-mail.net', '<html><body>It works!</body></html>\n');

    expect(await firstAttempt('cid@policy-garbled-mail.net')).toMatchObject({ outcome: 'delivered', mx: MX_HOST });

    const report = await todaysReport('policy-garbled-mail.net', (r) => failuresOf(r, 'sts-policy-invalid').length > 0);
    expect(failuresOf(report, 'sts-policy-invalid')).toEqual([
      {
        entry: expect.objectContaining({ policy: { 'policy-type': 'sts', 'policy-domain': 'policy-garbled-mail.net' } }),
        detail: { 'result-type': 'sts-policy-invalid', 'failed-session-count': 1, 'failure-reason-code': expect.stringMatching(/is not "key: value"/) },
      },
    ]);
    expect(failuresOf(report, 'sts-policy-fetch-error')).toEqual([]);
  });

  it('new id whose fetch fails while a policy is cached: the cached policy applies, and the failure is told under it', async () => {
    // A policy of id "first" fetched earlier (stored as the cache stores it); the TXT now announces "second".
    const now = Date.now();
    const policy = { mode: 'enforce' as const, mx: [MX_HOST], maxAge: 86400 };
    await t.daemon.store.mtaSts.save('policy-cached-mail.net', { id: 'first', policy, fetchedAtMs: now, expiresAtMs: now + 86_400_000 });
    domainAnnouncing('policy-cached-mail.net', 'second');
    policies.answer('mta-sts.policy-cached-mail.net', { status: 500 });

    expect(await firstAttempt('dan@policy-cached-mail.net')).toMatchObject({ outcome: 'delivered', tls: true, tlsDetail: { verified: true }, mtaSts: { mode: 'enforce', id: 'first' } });

    const report = await todaysReport('policy-cached-mail.net', (r) => failuresOf(r, 'sts-policy-fetch-error').length > 0);
    const [{ entry, detail }] = failuresOf(report, 'sts-policy-fetch-error');
    expect(entry.policy).toEqual({ 'policy-type': 'sts', 'policy-string': ['version: STSv1', 'mode: enforce', `mx: ${MX_HOST}`, 'max_age: 86400'], 'policy-domain': 'policy-cached-mail.net' });
    expect(detail['failed-session-count']).toBe(1);
    // The session was held to the cached policy, and succeeded under it.
    const sessions = report.policies.find((p) => p.policy['mx-host'] === MX_HOST);
    expect(sessions).toMatchObject({ policy: { 'policy-type': 'sts' }, summary: { 'total-successful-session-count': 1, 'total-failure-session-count': 0 } });
  });
});
