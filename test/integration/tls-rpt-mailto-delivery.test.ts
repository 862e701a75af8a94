/**
 * How delivery treats a TLS-RPT report mail (RFC 8460 5.3), end to end on loopback: a real
 * daemon with MTA-STS (policies over HTTPS from the test CA) and DANE (dns.dnssecValidating, a
 * signed zone in the dns2 test server) on, real smtp-server MX hosts for the rua domains.
 *
 *  - "sending MTAs MUST deliver reports despite any TLS-related failures": an ordinary message to
 *    a rua domain whose MTA-STS enforce policy or TLSA records its MX fails is deferred as before,
 *    the report to the same domain arrives (opportunistic TLS, any certificate, plain text after
 *    a refused STARTTLS), also when it was committed before a restart;
 *  - "SHOULD NOT include this SMTP session in the next report": the report's session is not in
 *    the day's TLS-RPT counts, an ordinary message's is;
 *  - the report's DKIM signature covers TLS-Report-Domain and TLS-Report-Submitter (5.3 SHOULD),
 *    as dkimpy and mailauth's verifier read it;
 *  - its Received field says it was made here, not received from an SMTP client.
 *
 * As in tls-rpt-mailto.test.ts the channel exists only once a daemon ran: the first daemon sets it
 * up, each scenario runs one on the same data folder with the tlsRpt settings; the reported
 * counts are two days old, so the report is due at once (runNow).
 */
import { simpleParser } from 'mailparser';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { Daemon } from '../../src/daemon.js';
import { createLogger } from '../../src/log/logger.js';
import type { Attempt } from '../support/attempts.js';
import { daneCerts, tlsaText } from '../support/dane-certs.js';
import { apiRequest, startDaemon, type ApiResponse, type TestDaemon } from '../support/daemon.js';
import { deliverySettings, routeTo } from '../support/delivery-rig.js';
import { dkimpyAvailable, dkimpyVerify } from '../support/dkimpy.js';
import { startDnsServer, type TestDns } from '../support/dns-server.js';
import { HOSTNAME } from '../support/domains.js';
import { startPolicyServer, type PolicyServer } from '../support/mta-sts-server.js';
import { startMxServer, type MxServer, type Received } from '../support/mx-server.js';
import { setupSender, type Sender } from '../support/sending.js';
import { testStoreOverrides } from '../support/store.js';
import { verifyDkim } from '../support/signing.js';
import { waitFor } from '../support/wait.js';

const DAY_MS = 86_400_000;
const day = new Date(Date.now() - 2 * DAY_MS).toISOString().slice(0, 10);
const today = () => new Date().toISOString().slice(0, 10);
const certs = daneCerts();

let dns: TestDns;
let policies: PolicyServer;
/** STARTTLS with a certificate no policy accepts for the rua MX names: the test CA's leaf for mx.dane-mail.net. */
let mx: MxServer;
/** Offers STARTTLS and refuses it (454). */
let refusing: MxServer;
let setup: TestDaemon;
let sender: Sender;
let daemon: Daemon | undefined;

beforeAll(async () => {
  dns = await startDnsServer();
  policies = await startPolicyServer();
  mx = await startMxServer({ address: '127.0.47.2', tlsOptions: { key: certs.leafKey, cert: certs.leafCert } });
  refusing = await startMxServer({ address: '127.0.47.3', port: mx.port, starttlsReply: { code: 454, message: '4.7.0 TLS not available due to local problem' } });
  setup = await startDaemon({ 'dns.servers': [dns.address], hostname: HOSTNAME });
  sender = await setupSender(setup, dns);
  await setup.daemon.stop();
});

afterAll(async () => {
  await daemon?.stop();
  await setup?.stop();
  await Promise.all([mx?.close(), refusing?.close(), policies?.close(), dns?.close()]);
});

afterEach(async () => {
  await daemon?.stop();
  daemon = undefined;
});

/** A daemon on the set-up data folder that mails reports from the sender's channel, MTA-STS and DANE on. */
async function run(overrides: Record<string, unknown> = {}): Promise<Daemon> {
  const config = loadConfig({
    env: {},
    overrides: {
      dataDir: setup.dataDir,
      ...testStoreOverrides(setup.dataDir),
      hostname: HOSTNAME,
      'http.port': 0,
      'log.level': 'silent',
      'smtp.enabled': false,
      ...deliverySettings(dns.address, mx.port),
      'dns.dnssecValidating': true,
      'delivery.mtaSts.caFile': policies.caFile,
      'delivery.mtaSts.httpsPort': policies.port,
      'tlsRpt.reportChannelId': sender.channelId,
      'tlsRpt.reportFrom': `tlsrpt@${sender.domain}`,
      ...overrides,
    },
  });
  daemon = new Daemon(config, createLogger({ level: 'silent' }));
  await daemon.start();
  return daemon;
}

let names = 0;
const fresh = (prefix: string) => `${prefix}-${++names}${Math.random().toString(36).slice(2, 6)}.net`;

/** A rua domain whose one MX host, mx.<domain>, is at `address`. */
function ruaDomain(prefix: string, address: string): string {
  const domain = fresh(prefix);
  routeTo(dns, domain, address);
  return domain;
}

/** The domain publishes an MTA-STS policy in `mode` naming `policyMx` (RFC 8461 3). */
function stsPolicy(domain: string, mode: string, policyMx: string): void {
  dns.set(`_mta-sts.${domain}`, 'TXT', [`v=STSv1; id=${mode}${names};`]);
  dns.set(`mta-sts.${domain}`, 'A', ['127.0.0.1']);
  policies.answer(`mta-sts.${domain}`, ['version: STSv1', `mode: ${mode}`, `mx: ${policyMx}`, 'max_age: 86400', ''].join('\r\n'));
}

/** A policy domain with a day of counts whose reports go to tlsrpt@<rua>; the report is made and submitted. */
async function reportTo(d: Daemon, rua: string): Promise<{ domain: string; mailbox: string }> {
  const domain = fresh('rcpt');
  const mailbox = `tlsrpt@${rua}`;
  dns.set(`_smtp._tls.${domain}`, 'TXT', [`v=TLSRPTv1; rua=mailto:${mailbox}`]);
  await d.store.tlsRpt.addCounts([{ day, policyDomain: domain, policy: { type: 'no-policy-found' }, success: 3, failures: [] }]);
  await d.tlsRpt.runNow();
  return { domain, mailbox };
}

function arrived(server: MxServer, mailbox: string): Promise<Received> {
  return waitFor(() => server.received.find((m) => m.to.includes(mailbox)), { what: `the report mail at ${mailbox}`, timeout: 15_000 });
}

function api(d: Daemon, method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<ApiResponse> {
  return apiRequest(`http://127.0.0.1:${d.http.port}`, () => setup.apiKey, method, path, { body, headers });
}

/** An ordinary message from the same channel to `to`, and its first attempt. */
async function ordinaryAttempt(d: Daemon, to: string): Promise<Attempt> {
  const body = { from: { email: `app@${sender.domain}` }, to: [{ email: to }], subject: 'Ordinary', text: 'Hello' };
  const res = await api(d, 'POST', '/send/transactional', body, { 'x-service-channel-id': sender.channelId });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return firstAttempt(d, res.body.messageId as string);
}

/**
 * The message's first attempt, once recorded: the MX may hold the mail a moment before the
 * daemon has stored the attempt that took it there.
 */
function firstAttempt(d: Daemon, messageId: string): Promise<Attempt> {
  return waitFor(async () => ((await api(d, 'GET', `/activity/messages/${messageId}`)).body.attempts as Attempt[] | undefined)?.[0], { what: `the first attempt of ${messageId}`, timeout: 15_000 });
}

/** The report's message as activity lists it. */
async function reportMessage(d: Daemon, mailbox: string): Promise<{ messageId: string; mailSource: string }> {
  const res = await api(d, 'GET', `/activity/messages?recipient=${encodeURIComponent(mailbox)}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body.results).toHaveLength(1);
  return res.body.results[0] as { messageId: string; mailSource: string };
}

/** The h= tag of the message's first DKIM-Signature, lowercased names. */
function signedHeaders(raw: Buffer): string[] {
  const text = raw.toString('latin1');
  const field = /^DKIM-Signature:(.*(?:\r\n[ \t].*)*)/im.exec(text)?.[1] ?? '';
  const h = /(?:^|;)\s*h=([^;]*)/.exec(field.replace(/\r\n[ \t]/g, ' '))?.[1] ?? '';
  return h.split(':').map((n) => n.trim().toLowerCase());
}

describe('TLS-RPT report mail in delivery (RFC 8460 5.3)', () => {
  it('MTA-STS enforce naming another MX: an ordinary message is deferred, the report arrives and is not counted', async () => {
    const d = await run();
    const rua = ruaDomain('sts-reports', mx.address);
    stsPolicy(rua, 'enforce', 'mail.elsewhere-mail.net');
    const ordinary = await ordinaryAttempt(d, `someone@${rua}`);
    expect(ordinary).toMatchObject({ outcome: 'deferred', tls: false, mtaSts: { mode: 'enforce' } });
    expect(ordinary.response).toMatch(/No MX host of .* matches its MTA-STS policy/);

    const { mailbox } = await reportTo(d, rua);
    const got = await arrived(mx, mailbox);
    expect(got.secure).toBe(true); // STARTTLS with a certificate that verifies for no name of the rua domain
    const { messageId } = await reportMessage(d, mailbox);
    expect((await d.store.messages.get(messageId))?.tlsReport).toBe(true);
    const attempt = await firstAttempt(d, messageId);
    expect(attempt).toMatchObject({ outcome: 'delivered', mx: `mx.${rua}`, tls: true, tlsDetail: { verified: false } });
    expect(attempt.mtaSts).toBeUndefined();

    // Only the ordinary message's refusal is counted for the rua domain, not the report's session.
    await d.tlsRpt.flush();
    expect(await d.store.tlsRpt.counts(today(), rua)).toMatchObject([{ policy: { type: 'sts' }, success: 0, failures: [{ count: 1, failure: { type: 'validation-failure' } }] }]);
  });

  it('MTA-STS enforce and an MX that refuses STARTTLS: the ordinary message is deferred, the report goes in plain text', async () => {
    const d = await run();
    const rua = ruaDomain('sts-plain', refusing.address);
    stsPolicy(rua, 'enforce', `mx.${rua}`);
    const ordinary = await ordinaryAttempt(d, `someone@${rua}`);
    expect(ordinary).toMatchObject({ outcome: 'deferred', tls: false });
    expect(ordinary.response).toMatch(/required by the MTA-STS policy.*STARTTLS refused: 454/);
    expect(refusing.received.some((m) => m.to.includes(`someone@${rua}`))).toBe(false);

    const { mailbox } = await reportTo(d, rua);
    expect((await arrived(refusing, mailbox)).secure).toBe(false);
  });

  it('DANE TLSA records the MX certificate does not match: the ordinary message is deferred, the report arrives over TLS', async () => {
    const d = await run();
    const rua = ruaDomain('dane-reports', mx.address);
    dns.signed(rua);
    dns.set(`_25._tcp.mx.${rua}`, 'TLSA', [tlsaText(3, 1, 1, certs.otherCa)]);
    const ordinary = await ordinaryAttempt(d, `someone@${rua}`);
    expect(ordinary).toMatchObject({ outcome: 'deferred', mx: `mx.${rua}`, tls: false });
    expect(ordinary.response).toMatch(/required by the DANE TLSA records of mx\./);

    const { mailbox } = await reportTo(d, rua);
    expect((await arrived(mx, mailbox)).secure).toBe(true);
    const { messageId } = await reportMessage(d, mailbox);
    const attempt = await firstAttempt(d, messageId);
    expect(attempt).toMatchObject({ outcome: 'delivered', tls: true });
    expect(attempt.tlsDetail?.dane).toBeUndefined();
    await d.tlsRpt.flush();
    expect(await d.store.tlsRpt.counts(today(), rua)).toMatchObject([{ policy: { type: 'tlsa' }, success: 0, failures: [{ count: 1, failure: { type: 'tlsa-invalid' } }] }]);
  });

  it('a report committed before a restart is still sent despite the policy: the mark is stored with the message', async () => {
    const rua = ruaDomain('sts-restart', mx.address);
    stsPolicy(rua, 'enforce', 'mail.elsewhere-mail.net');
    const queued = await run({ 'delivery.enabled': false });
    const { mailbox } = await reportTo(queued, rua);
    const { messageId } = await reportMessage(queued, mailbox);
    await queued.stop();
    daemon = undefined;
    const d = await run();
    await arrived(mx, mailbox);
    expect((await d.store.messages.get(messageId))?.tlsReport).toBe(true);
  });

  it('without a policy: the report session is not counted nor kept for other mail, an ordinary message to the same domain is counted', async () => {
    const d = await run();
    const rua = ruaDomain('plain-reports', mx.address);
    const { mailbox } = await reportTo(d, rua);
    // Arrived: its session was opened, and told to TLS-RPT if it ever would be, before the DATA.
    await arrived(mx, mailbox);
    await d.tlsRpt.flush();
    expect(await d.store.tlsRpt.counts(today(), rua)).toEqual([]);
    // A new session: a message over the report's kept connection would not have been counted.
    expect(await ordinaryAttempt(d, `someone@${rua}`)).toMatchObject({ outcome: 'delivered', tls: true });
    await d.tlsRpt.flush();
    expect(await d.store.tlsRpt.counts(today(), rua)).toMatchObject([{ policy: { type: 'no-policy-found' }, success: 1, failures: [] }]);
  });

  it('is DKIM-signed over TLS-Report-Domain and TLS-Report-Submitter, and its Received field says it was made here', async () => {
    const d = await run();
    const rua = ruaDomain('signed-reports', mx.address);
    const { domain, mailbox } = await reportTo(d, rua);
    const got = await arrived(mx, mailbox);
    const h = signedHeaders(got.raw);
    expect(h).toEqual(expect.arrayContaining(['tls-report-domain', 'tls-report-submitter']));
    // Over-signed (RFC 6376 8.15): listed once more than present, so a second copy cannot be added.
    expect(h.filter((n) => n === 'tls-report-domain')).toHaveLength(2);
    const verdict = await verifyDkim(dns, got.raw);
    expect(verdict.results.map((r: { status: { result: string } }) => r.status.result)).toEqual(['pass']);
    if (dkimpyAvailable()) {
      const record = sender.dnsRecords.domainKeyActive.value;
      expect(await dkimpyVerify(got.raw, record)).toBe('pass');
      const forged = Buffer.from(got.raw.toString('latin1').replace(`TLS-Report-Domain: ${domain}`, 'TLS-Report-Domain: forged-domain.net'), 'latin1');
      expect(await dkimpyVerify(forged, record)).toBe('fail');
    }

    const mail = await simpleParser(got.raw);
    const received = [mail.headers.get('received')].flat().map(String);
    expect(received).toHaveLength(1);
    expect(received[0]).toMatch(new RegExp(`^from localhost by ${HOSTNAME.replace(/\./g, '\\.')} id [0-9a-f-]+ \\(TLS-RPT report generated by this host, RFC 8460\\);`));
    expect(received[0]).not.toMatch(/ESMTP|unknown/);
    // The API's mailSource enum is closed (api | smtp): the report took the raw-message path.
    expect((await reportMessage(d, mailbox)).mailSource).toBe('smtp');
  });
});
