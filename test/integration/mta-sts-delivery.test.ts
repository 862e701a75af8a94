/**
 * MTA-STS applied by delivery (RFC 8461 5; issue 21): a real daemon sends through the API to
 * smtp-server MX hosts on 127.0.42.x whose certificates come from the policy server's test CA
 * (delivery.mtaSts.caFile, trusted for both), with policies served over HTTPS
 * (test/support/mta-sts-server.ts) and the records by the dns2 test server. What each attempt
 * did is read from the message details (`attempts`), as an operator would.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import { startDnsServer, type TestDns } from '../support/dns-server.js';
import { startPolicyServer, stsDeliverySettings, type PolicyServer } from '../support/mta-sts-server.js';
import { startMxServer, type MxServer } from '../support/mx-server.js';
import { setupSender, type Sender } from '../support/sending.js';
import { firstAttempt as sendAndReadFirstAttempt, type Attempt } from '../support/attempts.js';

let dns: TestDns;
let policies: PolicyServer;
let good: MxServer;
let refusing: MxServer;
let selfSigned: MxServer;
let t: TestDaemon;
let s: Sender;

/** A recipient domain with one MX host and an MTA-STS policy of `mode` naming `policyMx`. */
function domainWith(domain: string, mxHost: string, address: string, mode: string, policyMx: string): void {
  dns.set(domain, 'MX', [`10 ${mxHost}`]);
  dns.set(mxHost, 'A', [address]);
  dns.set(`_mta-sts.${domain}`, 'TXT', [`v=STSv1; id=${mode}1;`]);
  dns.set(`mta-sts.${domain}`, 'A', ['127.0.0.1']);
  policies.answer(`mta-sts.${domain}`, ['version: STSv1', `mode: ${mode}`, `mx: ${policyMx}`, 'max_age: 86400', ''].join('\r\n'));
}

beforeAll(async () => {
  dns = await startDnsServer();
  policies = await startPolicyServer();
  good = await startMxServer({ address: '127.0.42.2', tlsOptions: policies.issue('mx.sts-good-mail.net') });
  refusing = await startMxServer({ address: '127.0.42.3', port: good.port, starttlsReply: { code: 454, message: '4.7.0 TLS not available due to local problem' } });
  selfSigned = await startMxServer({ address: '127.0.42.4', port: good.port });
  domainWith('sts-selfsigned-mail.net', 'mx.sts-selfsigned-mail.net', '127.0.42.4', 'enforce', 'mx.sts-selfsigned-mail.net');
  dns.set('no-policy-mail.net', 'MX', ['10 mx.sts-good-mail.net']);
  domainWith('sts-good-mail.net', 'mx.sts-good-mail.net', '127.0.42.2', 'enforce', 'mx.sts-good-mail.net');
  domainWith('sts-mismatch-mail.net', 'mx.sts-good-mail.net', '127.0.42.2', 'enforce', 'mail.elsewhere-mail.net');
  domainWith('sts-refusing-mail.net', 'mx.sts-refusing-mail.net', '127.0.42.3', 'enforce', '*.sts-refusing-mail.net');
  domainWith('sts-testing-mail.net', 'mx.sts-testing-mail.net', '127.0.42.3', 'testing', 'mail.elsewhere-mail.net');
  t = await startDaemon(stsDeliverySettings(dns.address, policies, good.port));
  s = await setupSender(t, dns);
});

afterAll(async () => {
  await t?.stop();
  await Promise.all([good?.close(), refusing?.close(), selfSigned?.close(), policies?.close(), dns?.close()]);
});

const firstAttempt = (to: string): Promise<Attempt> => sendAndReadFirstAttempt(t, s, to, 'MTA-STS');

describe('MTA-STS in delivery', () => {
  it('enforce, MX in the policy, certificate from a trusted CA: delivered over verified TLS', async () => {
    const attempt = await firstAttempt('ann@sts-good-mail.net');
    expect(attempt).toMatchObject({ outcome: 'delivered', mx: 'mx.sts-good-mail.net', tls: true, tlsDetail: { verified: true }, mtaSts: { mode: 'enforce', id: 'enforce1' } });
    expect(attempt.mtaSts?.failure).toBeUndefined();
    expect(good.received.find((m) => m.to.includes('ann@sts-good-mail.net'))?.secure).toBe(true);
  });

  it('enforce, no MX in the policy: deferred without connecting (4.7.5)', async () => {
    const connections = good.connections;
    const attempt = await firstAttempt('bob@sts-mismatch-mail.net');
    expect(attempt).toMatchObject({ outcome: 'deferred', tls: false, mtaSts: { mode: 'enforce', id: 'enforce1' } });
    expect(attempt.response).toMatch(/No MX host of sts-mismatch-mail\.net matches its MTA-STS policy/);
    expect(good.connections).toBe(connections);
  });

  it('enforce, MX refuses STARTTLS: deferred, never delivered in plain text', async () => {
    const attempt = await firstAttempt('cid@sts-refusing-mail.net');
    expect(attempt).toMatchObject({ outcome: 'deferred', mx: 'mx.sts-refusing-mail.net', tls: false, mtaSts: { mode: 'enforce' } });
    expect(attempt.response).toMatch(/required by the MTA-STS policy.*STARTTLS refused: 454 4\.7\.0/);
    expect(refusing.received.some((m) => m.to.includes('cid@sts-refusing-mail.net'))).toBe(false);
  });

  it('enforce, certificate that does not verify: deferred with the reason, never delivered', async () => {
    const attempt = await firstAttempt('eve@sts-selfsigned-mail.net');
    expect(attempt).toMatchObject({ outcome: 'deferred', mx: 'mx.sts-selfsigned-mail.net', tls: false, mtaSts: { mode: 'enforce' } });
    expect(attempt.response).toMatch(/required by the MTA-STS policy.*(self[- ]signed|certificate)/i);
    expect(selfSigned.received).toHaveLength(0);
  });

  it('testing: delivered as without a policy, and what enforce would have refused is recorded', async () => {
    const attempt = await firstAttempt('dan@sts-testing-mail.net');
    expect(attempt).toMatchObject({ outcome: 'delivered', mx: 'mx.sts-testing-mail.net', tls: false, mtaSts: { mode: 'testing', id: 'testing1' } });
    expect(attempt.tlsDetail?.reason).toMatch(/^STARTTLS refused: 454/);
    expect(attempt.mtaSts?.failure).toMatch(/MX host mx\.sts-testing-mail\.net is not in the policy/);
    expect(refusing.received.find((m) => m.to.includes('dan@sts-testing-mail.net'))?.secure).toBe(false);
  });

  it('tells TLS-RPT every negotiation under the policy it was held to (RFC 8460)', async () => {
    expect(await firstAttempt('fay@no-policy-mail.net')).toMatchObject({ outcome: 'delivered', tls: true });
    await t.daemon.tlsRpt.flush();
    const day = new Date().toISOString().slice(0, 10);
    const counts = (domain: string) => t.daemon.store.tlsRpt.counts(day, domain);
    expect(await counts('no-policy-mail.net')).toMatchObject([{ policy: { type: 'no-policy-found' }, success: 1, failures: [] }]);
    expect(await counts('sts-good-mail.net')).toMatchObject([{ policy: { type: 'sts', mxHost: 'mx.sts-good-mail.net', string: ['version: STSv1', 'mode: enforce', 'mx: mx.sts-good-mail.net', 'max_age: 86400'] }, success: 1 }]);
    expect(await counts('sts-refusing-mail.net')).toMatchObject([{ policy: { type: 'sts', mxHost: '*.sts-refusing-mail.net' }, success: 0, failures: [{ count: 1, failure: { type: 'starttls-not-supported', receivingMxHostname: 'mx.sts-refusing-mail.net', receivingIp: '127.0.42.3' } }] }]);
    expect(await counts('sts-selfsigned-mail.net')).toMatchObject([{ policy: { type: 'sts' }, success: 0, failures: [{ count: 1, failure: { type: 'certificate-not-trusted' } }] }]);
    // No MX in the enforce policy: RFC 8460 has no type for it, 4.3.3 says validation-failure.
    expect(await counts('sts-mismatch-mail.net')).toMatchObject([{ policy: { type: 'sts', mxHost: 'mx.sts-good-mail.net' }, success: 0, failures: [{ count: 1, failure: { type: 'validation-failure', receivingMxHostname: 'mx.sts-good-mail.net' } }] }]);
    expect(await counts('sts-testing-mail.net')).toMatchObject([{ policy: { type: 'sts' }, success: 0, failures: [{ count: 1, failure: { type: 'starttls-not-supported' } }] }]);
  });
});
