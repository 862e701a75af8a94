/**
 * DANE in delivery, the cases next to delivery-tls-dane.test.ts (same setup, own daemon and
 * addresses 127.0.44.x): a DANE-TA trust anchor (RFC 7672 3.1.1), a TLSA set without usable
 * records (RFC 7672 3.1.3: TLS mandatory, not authenticated) and a TLSA lookup that fails
 * (RFC 7672 2.2: that MX host is not used).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { daneCerts, DANE_MX, tlsaText } from '../support/dane-certs.js';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import { deliverySettings } from '../support/delivery-rig.js';
import { startDnsServer, type TestDns } from '../support/dns-server.js';
import { startMxServer, type MxServer } from '../support/mx-server.js';
import { setupSender, type Sender } from '../support/sending.js';
import { firstAttempt as sendAndReadFirstAttempt, type Attempt } from '../support/attempts.js';

let dns: TestDns;
let mx: MxServer;
let refusing: MxServer;
let t: TestDaemon;
let s: Sender;
const certs = daneCerts();

/** An MX host in the signed zone dane-mail.net, with these TLSA records. */
function mxHost(host: string, address: string, tlsa: string[]): void {
  dns.set(host, 'A', [address]);
  dns.set(`_25._tcp.${host}`, 'TLSA', tlsa);
}

const unusable = () => [tlsaText(1, 1, 1, certs.leaf), tlsaText(0, 0, 1, certs.ca)];

beforeAll(async () => {
  dns = await startDnsServer();
  dns.signed('dane-mail.net');
  // The chain includes the CA: a DANE-TA record matches a certificate the server presents (RFC 7672 3.1.1).
  mx = await startMxServer({ address: '127.0.44.2', tlsOptions: { key: certs.leafKey, cert: certs.leafCert + certs.caCert } });
  refusing = await startMxServer({ address: '127.0.44.3', port: mx.port, starttlsReply: { code: 454, message: '4.7.0 TLS not available due to local problem' } });
  // The certificate names mx.dane-mail.net, the one host whose name DANE-TA checks.
  mxHost(DANE_MX, '127.0.44.2', [tlsaText(2, 0, 1, certs.ca), tlsaText(2, 1, 1, certs.ca)]);
  mxHost('mx-unusable.dane-mail.net', '127.0.44.2', unusable());
  mxHost('mx-unusable-refusing.dane-mail.net', '127.0.44.3', unusable());
  // Its own address: the MX resolver drops a host whose addresses an earlier host already has.
  dns.set('mx-fail.dane-mail.net', 'A', ['127.0.44.4']);
  dns.servfail('_25._tcp.mx-fail.dane-mail.net');
  dns.set('dane-ta-mail.net', 'MX', [`10 ${DANE_MX}`]);
  dns.set('unusable-mail.net', 'MX', ['10 mx-unusable.dane-mail.net']);
  dns.set('unusable-refusing-mail.net', 'MX', ['10 mx-unusable-refusing.dane-mail.net']);
  dns.set('servfail-one-mail.net', 'MX', ['10 mx-fail.dane-mail.net', `20 ${DANE_MX}`]);
  dns.set('servfail-all-mail.net', 'MX', ['10 mx-fail.dane-mail.net']);
  t = await startDaemon({ ...deliverySettings(dns.address, mx.port), 'dns.dnssecValidating': true });
  s = await setupSender(t, dns);
});

afterAll(async () => {
  await t?.stop();
  await Promise.all([mx?.close(), refusing?.close(), dns?.close()]);
});

const firstAttempt = (to: string): Promise<Attempt> => sendAndReadFirstAttempt(t, s, to, 'DANE');

const receivedBy = (server: MxServer, to: string) => server.received.filter((m) => m.to.includes(to));

describe('DANE in delivery: trust anchors, unusable records, failed lookups', () => {
  it('TLSA 2 0 1 / 2 1 1 of the CA that issued the MX certificate: delivered, authenticated by DANE-TA', async () => {
    const attempt = await firstAttempt('ann@dane-ta-mail.net');
    expect(attempt).toMatchObject({ outcome: 'delivered', mx: DANE_MX, tls: true });
    expect(attempt.tlsDetail?.dane).toMatch(/^DANE: authenticated/);
    expect(receivedBy(mx, 'ann@dane-ta-mail.net')[0]?.secure).toBe(true);
  });

  it('only PKIX-TA/PKIX-EE records (unusable): a TLS MX delivers encrypted, not authenticated', async () => {
    const attempt = await firstAttempt('bob@unusable-mail.net');
    expect(attempt).toMatchObject({ outcome: 'delivered', mx: 'mx-unusable.dane-mail.net', tls: true });
    expect(attempt.tlsDetail?.dane).toMatch(/^DANE: encrypted, not authenticated/);
    expect(receivedBy(mx, 'bob@unusable-mail.net')[0]?.secure).toBe(true);
  });

  it('only PKIX records and an MX that refuses STARTTLS: deferred, no plain-text fallback', async () => {
    const attempt = await firstAttempt('cid@unusable-refusing-mail.net');
    expect(attempt).toMatchObject({ outcome: 'deferred', mx: 'mx-unusable-refusing.dane-mail.net', tls: false });
    expect(attempt.response).toMatch(/STARTTLS refused: 454/);
    expect(refusing.received).toHaveLength(0);
  });

  it('SERVFAIL on one MX host\'s TLSA lookup: that host is skipped, the next one delivers', async () => {
    const attempt = await firstAttempt('dee@servfail-one-mail.net');
    expect(attempt).toMatchObject({ outcome: 'delivered', mx: DANE_MX, tls: true });
    expect(attempt.tlsDetail?.dane).toMatch(/^DANE: authenticated/);
  });

  it('SERVFAIL on the only MX host\'s TLSA lookup: deferred 4.7.5, nothing sent', async () => {
    const attempt = await firstAttempt('eve@servfail-all-mail.net');
    expect(attempt.outcome).toBe('deferred');
    expect(attempt.response).toMatch(/TLSA lookup failed.*mx-fail\.dane-mail\.net: .*SERVFAIL/);
    expect(receivedBy(mx, 'eve@servfail-all-mail.net')).toHaveLength(0);
  });

  it('tells TLS-RPT the DANE-TA success, and each failed TLSA lookup as dnssec-invalid (RFC 8460 4.3.2.1)', async () => {
    await t.daemon.tlsRpt.flush();
    const day = new Date().toISOString().slice(0, 10);
    const counts = (domain: string) => t.daemon.store.tlsRpt.counts(day, domain);
    expect(await counts('dane-ta-mail.net')).toMatchObject([{ policy: { type: 'tlsa', mxHost: DANE_MX }, success: 1, failures: [] }]);
    const dnssecInvalid = { policy: { type: 'tlsa', mxHost: 'mx-fail.dane-mail.net' }, success: 0, failures: [{ count: 1, failure: { type: 'dnssec-invalid', receivingMxHostname: 'mx-fail.dane-mail.net', failureReasonCode: expect.stringMatching(/SERVFAIL/) } }] };
    expect(await counts('servfail-all-mail.net')).toMatchObject([dnssecInvalid]);
    // Its delivery through mx.dane-mail.net may reuse the kept connection, which is no negotiation.
    expect(await counts('servfail-one-mail.net')).toEqual(expect.arrayContaining([expect.objectContaining(dnssecInvalid)]));
  });
});
