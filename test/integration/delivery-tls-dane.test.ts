/**
 * DANE applied by delivery (RFC 7672; issue 21): a real daemon with dns.dnssecValidating sends
 * through the API to smtp-server MX hosts on 127.0.43.x; the dns2 test server answers for the
 * signed zone dane-mail.net with the AD bit and serves the TLSA records. What each attempt did is
 * read from the message details, the TLS-RPT counts from the store.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { daneCerts, tlsaText } from '../support/dane-certs.js';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import { deliverySettings } from '../support/delivery-rig.js';
import { startDnsServer, type TestDns } from '../support/dns-server.js';
import { startMxServer, type MxServer } from '../support/mx-server.js';
import { setupSender, type Sender } from '../support/sending.js';
import { waitFor } from '../support/wait.js';
import { firstAttempt as sendAndReadFirstAttempt, type Attempt } from '../support/attempts.js';

let dns: TestDns;
let mx: MxServer;
let refusing: MxServer;
/** Presents the same certificate; only the host whose TLSA records do not match it points here. */
let wrong: MxServer;
let t: TestDaemon;
let s: Sender;
const certs = daneCerts();

/** A recipient domain whose one MX host, in the signed zone dane-mail.net, has these TLSA records. */
function domainWith(domain: string, mxHost: string, address: string, tlsa: string[]): void {
  dns.set(domain, 'MX', [`10 ${mxHost}`]);
  dns.set(mxHost, 'A', [address]);
  dns.set(`_25._tcp.${mxHost}`, 'TLSA', tlsa);
}

beforeAll(async () => {
  dns = await startDnsServer();
  dns.signed('dane-mail.net');
  mx = await startMxServer({ address: '127.0.43.2', tlsOptions: { key: certs.leafKey, cert: certs.leafCert } });
  refusing = await startMxServer({ address: '127.0.43.3', port: mx.port, starttlsReply: { code: 454, message: '4.7.0 TLS not available due to local problem' } });
  domainWith('dane-ok-mail.net', 'mx.dane-mail.net', '127.0.43.2', [tlsaText(3, 1, 1, certs.leaf)]);
  wrong = await startMxServer({ address: '127.0.43.4', port: mx.port, tlsOptions: { key: certs.leafKey, cert: certs.leafCert } });
  domainWith('dane-wrong-mail.net', 'mx-wrong.dane-mail.net', '127.0.43.4', [tlsaText(3, 1, 1, certs.otherCa)]);
  domainWith('dane-refusing-mail.net', 'mx-refusing.dane-mail.net', '127.0.43.3', [tlsaText(3, 1, 1, certs.leaf)]);
  t = await startDaemon({ ...deliverySettings(dns.address, mx.port), 'dns.dnssecValidating': true });
  s = await setupSender(t, dns);
});

afterAll(async () => {
  await t?.stop();
  await Promise.all([mx?.close(), refusing?.close(), wrong?.close(), dns?.close()]);
});

const firstAttempt = (to: string): Promise<Attempt> => sendAndReadFirstAttempt(t, s, to, 'DANE');

describe('DANE in delivery', () => {
  it('TLSA 3 1 1 matching the MX key: delivered over TLS, authenticated by DANE', async () => {
    const attempt = await firstAttempt('ann@dane-ok-mail.net');
    expect(attempt).toMatchObject({ outcome: 'delivered', mx: 'mx.dane-mail.net', tls: true });
    expect(attempt.tlsDetail?.dane).toMatch(/^DANE: authenticated/);
    expect(mx.received.find((m) => m.to.includes('ann@dane-ok-mail.net'))?.secure).toBe(true);
  });

  it('no TLSA record matches the certificate: deferred, never delivered', async () => {
    const attempt = await firstAttempt('bob@dane-wrong-mail.net');
    expect(attempt).toMatchObject({ outcome: 'deferred', mx: 'mx-wrong.dane-mail.net', tls: false });
    expect(attempt.response).toMatch(/required by the DANE TLSA records of mx-wrong\.dane-mail\.net.*DANE: /);
    expect(wrong.received).toHaveLength(0);
    // The session is ended with QUIT (RFC 5321 4.1.1.10), not dropped.
    await waitFor(() => wrong.quits > 0, { what: 'QUIT after the DANE refusal' });
  });

  it('TLSA records and an MX that refuses STARTTLS: deferred, no plain-text fallback', async () => {
    const attempt = await firstAttempt('cid@dane-refusing-mail.net');
    expect(attempt).toMatchObject({ outcome: 'deferred', mx: 'mx-refusing.dane-mail.net', tls: false });
    expect(attempt.response).toMatch(/DANE TLSA records.*STARTTLS refused: 454/);
    expect(refusing.received).toHaveLength(0);
  });

  it('tells TLS-RPT each negotiation under the tlsa policy', async () => {
    await t.daemon.tlsRpt.flush();
    const day = new Date().toISOString().slice(0, 10);
    const counts = (domain: string) => t.daemon.store.tlsRpt.counts(day, domain);
    expect(await counts('dane-ok-mail.net')).toMatchObject([{ policy: { type: 'tlsa', mxHost: 'mx.dane-mail.net', string: [tlsaText(3, 1, 1, certs.leaf)] }, success: 1, failures: [] }]);
    expect(await counts('dane-wrong-mail.net')).toMatchObject([{ policy: { type: 'tlsa' }, success: 0, failures: [{ count: 1, failure: { type: 'tlsa-invalid', receivingMxHostname: 'mx-wrong.dane-mail.net' } }] }]);
    expect(await counts('dane-refusing-mail.net')).toMatchObject([{ policy: { type: 'tlsa' }, success: 0, failures: [{ count: 1, failure: { type: 'starttls-not-supported' } }] }]);
  });
});
