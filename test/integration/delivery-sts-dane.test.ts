/**
 * DANE and MTA-STS together (RFC 8461 2, RFC 7672 2.2): a real daemon with dns.dnssecValidating
 * and MTA-STS on sends through the API to smtp-server MX hosts on 127.0.49.x. The dns2 test server
 * answers for the signed zone dane-mail.net (AD bit, TLSA records), the policies come over HTTPS
 * from the test CA, which the daemon also trusts for MX certificates. DANE takes precedence: an MX
 * host with TLSA records is delivered to under DANE, its TLSA match never passed by the policy,
 * and whether or not the policy names it when a validated MX RRset does (the recipient domain's
 * zone signed too); a host with neither stays refused under enforce, and so does a host under
 * DANE that only an unsigned MX RRset names (a forged MX answer could name it).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { firstAttempt as sendAndReadFirstAttempt, type Attempt } from '../support/attempts.js';
import { DANE_MX, daneCerts, tlsaText } from '../support/dane-certs.js';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import { startDnsServer, type TestDns } from '../support/dns-server.js';
import { startPolicyServer, stsDeliverySettings, type PolicyServer } from '../support/mta-sts-server.js';
import { startMxServer, type MxServer } from '../support/mx-server.js';
import { setupSender, type Sender } from '../support/sending.js';

/** In dane-mail.net but without TLSA records (a validated denial): neither DANE nor, unless named, MTA-STS. */
const PLAIN_MX = 'mx-plain.dane-mail.net';
/** More names of daneMx, with the same TLSA records: a kept connection is one host's (no new negotiation for TLS-RPT). */
const NAMED_MX = 'mx-named.dane-mail.net';
const TESTING_MX = 'mx-testing.dane-mail.net';
const UNSIGNED_MX = 'mx-unsigned.dane-mail.net';
/** TLSA records that do not match its certificate, which the test CA issued for it (MTA-STS would accept it). */
const MISMATCH_MX = 'mx-mismatch.dane-mail.net';

let dns: TestDns;
let policies: PolicyServer;
/** mx.dane-mail.net: the DANE leaf (its CA is not trusted by the daemon), matched by TLSA 3 1 1. */
let daneMx: MxServer;
let plainMx: MxServer;
let mismatchMx: MxServer;
let t: TestDaemon;
let s: Sender;
const certs = daneCerts();

/** `domain`'s MX hosts in order of preference, and its MTA-STS policy of `mode` naming `policyMx`. */
function domainWith(domain: string, mxHosts: string[], mode: string, policyMx: string): void {
  dns.set(domain, 'MX', mxHosts.map((exchange, i) => ({ priority: 10 * (i + 1), exchange })));
  dns.set(`_mta-sts.${domain}`, 'TXT', [`v=STSv1; id=${mode}1;`]);
  dns.set(`mta-sts.${domain}`, 'A', ['127.0.0.1']);
  policies.answer(`mta-sts.${domain}`, ['version: STSv1', `mode: ${mode}`, `mx: ${policyMx}`, 'max_age: 86400', ''].join('\r\n'));
}

beforeAll(async () => {
  dns = await startDnsServer();
  dns.signed('dane-mail.net');
  policies = await startPolicyServer();
  daneMx = await startMxServer({ address: '127.0.49.2', tlsOptions: { key: certs.leafKey, cert: certs.leafCert } });
  plainMx = await startMxServer({ address: '127.0.49.3', port: daneMx.port, tlsOptions: policies.issue(PLAIN_MX) });
  mismatchMx = await startMxServer({ address: '127.0.49.4', port: daneMx.port, tlsOptions: policies.issue(MISMATCH_MX) });
  for (const host of [DANE_MX, NAMED_MX, TESTING_MX, UNSIGNED_MX]) {
    dns.set(host, 'A', ['127.0.49.2']);
    dns.set(`_25._tcp.${host}`, 'TLSA', [tlsaText(3, 1, 1, certs.leaf)]);
  }
  dns.set(PLAIN_MX, 'A', ['127.0.49.3']);
  dns.set(MISMATCH_MX, 'A', ['127.0.49.4']);
  dns.set(`_25._tcp.${MISMATCH_MX}`, 'TLSA', [tlsaText(3, 1, 1, certs.leaf)]);
  dns.signed('dane-outside-mail.net');
  domainWith('dane-outside-mail.net', [PLAIN_MX, DANE_MX], 'enforce', 'mx.elsewhere-mail.net');
  domainWith('dane-unsigned-mail.net', [UNSIGNED_MX], 'enforce', 'mx.elsewhere-mail.net');
  domainWith('dane-named-mail.net', [NAMED_MX], 'enforce', NAMED_MX);
  domainWith('dane-mismatch-mail.net', [MISMATCH_MX], 'enforce', MISMATCH_MX);
  domainWith('neither-mail.net', [PLAIN_MX], 'enforce', 'mx.elsewhere-mail.net');
  dns.signed('dane-testing-mail.net');
  domainWith('dane-testing-mail.net', [TESTING_MX], 'testing', 'mx.elsewhere-mail.net');
  t = await startDaemon({ ...stsDeliverySettings(dns.address, policies, daneMx.port), 'dns.dnssecValidating': true });
  s = await setupSender(t, dns);
});

afterAll(async () => {
  await t?.stop();
  await Promise.all([daneMx?.close(), plainMx?.close(), mismatchMx?.close(), policies?.close(), dns?.close()]);
});

const firstAttempt = (to: string): Promise<Attempt> => sendAndReadFirstAttempt(t, s, to, 'DANE and MTA-STS');

describe('DANE and MTA-STS together', () => {
  it('enforce policy that does not name the DANE MX of a signed MX RRset: delivered to it under DANE; the host with neither is not tried', async () => {
    const plainConnections = plainMx.connections;
    const attempt = await firstAttempt('ann@dane-outside-mail.net');
    expect(attempt).toMatchObject({ outcome: 'delivered', mx: DANE_MX, tls: true, mtaSts: { mode: 'enforce', id: 'enforce1' } });
    expect(attempt.tlsDetail?.dane).toMatch(/^DANE: authenticated/);
    expect(attempt.mtaSts?.failure).toBeUndefined();
    expect(daneMx.received.find((m) => m.to.includes('ann@dane-outside-mail.net'))?.secure).toBe(true);
    expect(plainMx.connections).toBe(plainConnections);
  });

  it('enforce policy that does not name a DANE MX of an unsigned MX RRset: deferred without connecting (4.7.5)', async () => {
    const connections = daneMx.connections;
    const attempt = await firstAttempt('fay@dane-unsigned-mail.net');
    expect(attempt).toMatchObject({ outcome: 'deferred', tls: false, mtaSts: { mode: 'enforce' } });
    expect(attempt.response).toMatch(/No MX host of dane-unsigned-mail\.net matches its MTA-STS policy/);
    expect(daneMx.connections).toBe(connections);
  });

  it('enforce policy naming the DANE MX: delivered under DANE though its certificate is not from a trusted CA', async () => {
    const attempt = await firstAttempt('bob@dane-named-mail.net');
    expect(attempt).toMatchObject({ outcome: 'delivered', mx: NAMED_MX, tls: true, tlsDetail: { verified: false }, mtaSts: { mode: 'enforce' } });
    expect(attempt.tlsDetail?.dane).toMatch(/^DANE: authenticated/);
  });

  it('TLSA records that do not match a certificate the policy would accept: deferred, never delivered', async () => {
    const attempt = await firstAttempt('cid@dane-mismatch-mail.net');
    expect(attempt).toMatchObject({ outcome: 'deferred', mx: MISMATCH_MX, tls: false, mtaSts: { mode: 'enforce' } });
    expect(attempt.response).toMatch(/required by the DANE TLSA records of mx-mismatch\.dane-mail\.net.*DANE: /);
    expect(mismatchMx.received).toHaveLength(0);
  });

  it('an MX host with neither TLSA records nor a place in the enforce policy: deferred without connecting (4.7.5)', async () => {
    const plainConnections = plainMx.connections;
    const attempt = await firstAttempt('dan@neither-mail.net');
    expect(attempt).toMatchObject({ outcome: 'deferred', tls: false, mtaSts: { mode: 'enforce' } });
    expect(attempt.response).toMatch(/No MX host of neither-mail\.net matches its MTA-STS policy/);
    expect(plainMx.connections).toBe(plainConnections);
  });

  it('testing policy that does not name the DANE MX of a signed MX RRset: delivered under DANE, nothing enforce would have refused', async () => {
    const attempt = await firstAttempt('eve@dane-testing-mail.net');
    expect(attempt).toMatchObject({ outcome: 'delivered', mx: TESTING_MX, tls: true, mtaSts: { mode: 'testing', id: 'testing1' } });
    expect(attempt.tlsDetail?.dane).toMatch(/^DANE: authenticated/);
    expect(attempt.mtaSts?.failure).toBeUndefined();
  });

  it('tells TLS-RPT the DANE sessions as successes under the tlsa policy, the refused host under sts', async () => {
    await t.daemon.tlsRpt.flush();
    const day = new Date().toISOString().slice(0, 10);
    const counts = (domain: string) => t.daemon.store.tlsRpt.counts(day, domain);
    const tlsa = (mxHost: string) => ({ type: 'tlsa', mxHost, string: [tlsaText(3, 1, 1, certs.leaf)] });
    expect(await counts('dane-outside-mail.net')).toMatchObject([{ policy: tlsa(DANE_MX), success: 1, failures: [] }]);
    expect(await counts('dane-named-mail.net')).toMatchObject([{ policy: tlsa(NAMED_MX), success: 1, failures: [] }]);
    expect(await counts('dane-testing-mail.net')).toMatchObject([{ policy: tlsa(TESTING_MX), success: 1, failures: [] }]);
    expect(await counts('dane-mismatch-mail.net')).toMatchObject([{ policy: { type: 'tlsa', mxHost: MISMATCH_MX }, success: 0, failures: [{ count: 1, failure: { type: 'tlsa-invalid' } }] }]);
    expect(await counts('neither-mail.net')).toMatchObject([{ policy: { type: 'sts', mxHost: PLAIN_MX }, success: 0, failures: [{ count: 1, failure: { type: 'validation-failure', receivingMxHostname: PLAIN_MX } }] }]);
  });
});
