/**
 * TLS-RPT reports to mailto: rua addresses (RFC 8460 5.3), end to end on loopback: a real daemon
 * with delivery on, a channel with a domain verified through the API, the `_smtp._tls` and MX
 * records served by the dns2 test server, and a real smtp-server as the MX of the rua's domain.
 * The report goes through submission (signed, committed, delivered), so what the sink receives
 * is checked as a receiver would: the MIME structure, the gzipped report and the DKIM signature
 * by two verifiers that share no code with our signer's setup (dkimpy, mailauth's dkimVerify).
 *
 * The channel exists only once the daemon ran, as for an operator: the first daemon sets it up,
 * then each scenario starts a daemon on the same data folder with the tlsRpt settings it needs.
 * Counts are put in the store for a day two days back, so the report is due at once (runNow).
 */
import { gunzipSync } from 'node:zlib';
import { simpleParser } from 'mailparser';
import { dkimVerify } from 'mailauth/lib/dkim/verify.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/load.js';
import { Daemon } from '../../src/daemon.js';
import { createLogger } from '../../src/log/logger.js';
import { apiRequest, startDaemon, type TestDaemon } from '../support/daemon.js';
import { deliverySettings, routeTo } from '../support/delivery-rig.js';
import { dkimpyAvailable, dkimpyVerify } from '../support/dkimpy.js';
import { startDnsServer, type TestDns } from '../support/dns-server.js';
import { HOSTNAME } from '../support/domains.js';
import { startMxServer, type MxServer, type Received } from '../support/mx-server.js';
import { setupSender, type Sender } from '../support/sending.js';
import { testStoreOverrides } from '../support/store.js';
import { verifyDkim } from '../support/signing.js';
import { waitFor } from '../support/wait.js';

type LogLine = { level: number; msg: string; [k: string]: unknown };

const DAY_MS = 86_400_000;
const day = new Date(Date.now() - 2 * DAY_MS).toISOString().slice(0, 10);

let dns: TestDns;
let sink: MxServer;
let setup: TestDaemon;
let sender: Sender;
let daemon: Daemon | undefined;
let logLines: LogLine[] = [];

function base(): Record<string, unknown> {
  return {
    dataDir: setup.dataDir,
    ...testStoreOverrides(setup.dataDir),
    hostname: HOSTNAME,
    'http.port': 0,
    'smtp.enabled': false,
    ...deliverySettings(dns.address, sink.port),
  };
}

beforeAll(async () => {
  dns = await startDnsServer();
  sink = await startMxServer({ address: '127.0.43.2' });
  setup = await startDaemon({ 'dns.servers': [dns.address], hostname: HOSTNAME });
  sender = await setupSender(setup, dns);
  await setup.daemon.stop();
});

afterAll(async () => {
  await daemon?.stop();
  await setup?.stop();
  await Promise.all([sink?.close(), dns?.close()]);
});

afterEach(async () => {
  await daemon?.stop();
  daemon = undefined;
  logLines = [];
});

/** A daemon on the set-up data folder with these tlsRpt settings, its log lines in logLines. */
async function run(tlsRpt: { reportChannelId?: string; reportFrom?: string } = {}): Promise<Daemon> {
  const overrides = { ...base(), ...Object.fromEntries(Object.entries(tlsRpt).map(([k, v]) => [`tlsRpt.${k}`, v])) };
  const logger = createLogger({ level: 'debug', destination: { write: (s: string) => void logLines.push(JSON.parse(s) as LogLine) } });
  daemon = new Daemon(loadConfig({ env: {}, overrides }), logger);
  await daemon.start();
  return daemon;
}

const configured = () => ({ reportChannelId: sender.channelId, reportFrom: `tlsrpt@${sender.domain}` });

let names = 0;
/** A recipient domain with a day of counts, asking for reports at `rua` (a mailbox at its own rua domain by default). */
async function policyDomain(d: Daemon, rua?: (ruaDomain: string) => string): Promise<{ domain: string; mailbox: string }> {
  const id = `${++names}${Math.random().toString(36).slice(2, 6)}`;
  const domain = `rcpt-${id}.net`;
  const ruaDomain = `reports-${id}.net`;
  const mailbox = `tlsrpt@${ruaDomain}`;
  dns.set(`_smtp._tls.${domain}`, 'TXT', [`v=TLSRPTv1; rua=${rua ? rua(ruaDomain) : `mailto:${mailbox}`}`]);
  routeTo(dns, ruaDomain, sink.address);
  await d.store.tlsRpt.addCounts([
    { day, policyDomain: domain, policy: { type: 'no-policy-found' }, success: 7, failures: [{ failure: { type: 'starttls-not-supported', receivingMxHostname: `mx.${domain}`, receivingIp: '203.0.113.9' }, count: 2 }] },
  ]);
  return { domain, mailbox };
}

function logged(msg: RegExp, level = 30): LogLine[] {
  return logLines.filter((l) => l.level >= level && msg.test(l.msg));
}

/** The channel's messages to `recipient` as the activity API lists them. */
async function messagesTo(d: Daemon, recipient: string): Promise<unknown[]> {
  const res = await apiRequest(`http://127.0.0.1:${d.http.port}`, () => setup.apiKey, 'GET', `/activity/messages?recipient=${encodeURIComponent(recipient)}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.results as unknown[];
}

function esc(name: string): string {
  return name.replace(/\./g, '\\.');
}

describe('TLS-RPT reports to mailto: addresses', () => {
  it('are submitted from the configured channel, DKIM-signed, and arrive at the rua MX as RFC 8460 5.3 multipart/report', async () => {
    const d = await run(configured());
    const { domain, mailbox } = await policyDomain(d);
    await d.tlsRpt.runNow();
    const accepted = logged(/TLS-RPT report accepted for delivery by mail/);
    expect(accepted).toHaveLength(1);
    expect(accepted[0]).toMatchObject({ rua: `mailto:${mailbox}`, policyDomain: domain, messageId: expect.any(String) });
    expect((await d.store.tlsRpt.report(day, domain))?.pending).toEqual([]);

    const got: Received = await waitFor(() => sink.received.find((m) => m.to.includes(mailbox)), { what: `the report mail at ${mailbox}`, timeout: 15_000 });
    // The envelope sender is the channel domain's return path, as for any message it sends.
    expect(got.from).toMatch(new RegExp(`[@.]${esc(sender.domain)}$`));
    const mail = await simpleParser(got.raw);
    expect(mail.headers.get('content-type')).toMatchObject({ value: 'multipart/report', params: { 'report-type': 'tlsrpt' } });
    expect(mail.headers.get('tls-report-domain')).toBe(domain);
    expect(mail.headers.get('tls-report-submitter')).toBe(HOSTNAME);
    expect(mail.subject).toMatch(new RegExp(`^Report Domain: ${esc(domain)} Submitter: ${esc(HOSTNAME)} Report-ID: <[^@>]+@${esc(HOSTNAME)}>$`));
    expect(mail.from?.value[0].address).toBe(`tlsrpt@${sender.domain}`);
    expect(mail.text).toContain(`Policy domain: ${domain}`);
    expect(mail.attachments).toHaveLength(1);
    const [att] = mail.attachments;
    expect(att.contentType).toBe('application/tlsrpt+gzip');
    const begin = Date.parse(`${day}T00:00:00Z`) / 1000;
    expect(att.filename).toMatch(new RegExp(`^${esc(HOSTNAME)}!${esc(domain)}!${begin}!${begin + 86_399}![A-Za-z0-9-]+\\.json\\.gz$`));
    const report = JSON.parse(gunzipSync(att.content).toString('utf8')) as { 'report-id': string; 'date-range': unknown; policies: { policy: Record<string, string>; summary: Record<string, number> }[] };
    expect(report['date-range']).toEqual({ 'start-datetime': `${day}T00:00:00Z`, 'end-datetime': `${day}T23:59:59Z` });
    expect(report.policies).toEqual([
      expect.objectContaining({
        policy: { 'policy-type': 'no-policy-found', 'policy-domain': domain },
        summary: { 'total-successful-session-count': 7, 'total-failure-session-count': 2 },
      }),
    ]);
    expect(mail.subject).toContain(`Report-ID: <${report['report-id']}@`);

    const verdict = await verifyDkim(dns, got.raw);
    expect(verdict.results.map((r: { status: { result: string }; signingDomain: string }) => [r.status.result, r.signingDomain])).toEqual([['pass', sender.domain]]);
    if (dkimpyAvailable()) expect(await dkimpyVerify(got.raw, sender.dnsRecords.domainKeyActive.value)).toBe('pass');
    expect(await messagesTo(d, mailbox)).toHaveLength(1);
  });

  it('without tlsRpt.reportChannelId and tlsRpt.reportFrom: a warning naming the settings, and nothing sent', async () => {
    const d = await run();
    const { domain, mailbox } = await policyDomain(d);
    await d.tlsRpt.runNow();
    const warned = logged(/mailto: report addresses are not supported until tlsRpt\.reportChannelId and tlsRpt\.reportFrom are set/, 40);
    expect(warned).toHaveLength(1);
    expect(warned[0]).toMatchObject({ rua: `mailto:${mailbox}`, policyDomain: domain });
    expect((await d.store.tlsRpt.report(day, domain))?.pending).toEqual([]);
    expect(await messagesTo(d, mailbox)).toEqual([]);
  });

  it('refuses a mailto: with CR/LF or without an address, sends the rest of the rua list', async () => {
    const d = await run(configured());
    const bad = ['mailto:tlsrpt@evil-rua.net%0D%0ABcc:%20victim@elsewhere-mail.net', 'mailto:not-an-address'];
    const { domain, mailbox } = await policyDomain(d, (ruaDomain) => [...bad, `mailto:tlsrpt@${ruaDomain}`].join(','));
    await d.tlsRpt.runNow();
    const refused = logged(/report not sent to this mailto: address/, 40);
    expect(refused.map((l) => l.rua)).toEqual(bad);
    expect(refused.map((l) => l.error)).toEqual([expect.stringMatching(/not one plain local@domain/), expect.stringMatching(/email address/)]);
    expect(logged(/accepted for delivery by mail/).map((l) => l.rua)).toEqual([`mailto:${mailbox}`]);
    expect((await d.store.tlsRpt.report(day, domain))?.pending).toEqual([]);
    expect(await messagesTo(d, 'victim@elsewhere-mail.net')).toEqual([]);
    expect(await messagesTo(d, 'tlsrpt@evil-rua.net')).toEqual([]);
    await waitFor(() => sink.received.find((m) => m.to.includes(mailbox)), { what: `the report mail at ${mailbox}`, timeout: 15_000 });
    expect(sink.rcpts.filter((r) => /victim|evil-rua/.test(r))).toEqual([]);
  });

  it('warns at start about a From outside the channel\'s domains; submission refuses the report and it is tried again later', async () => {
    const d = await run({ reportChannelId: sender.channelId, reportFrom: 'tlsrpt@not-linked-mail.net' });
    expect(logged(/reports to mailto: addresses will be refused/, 40).map((l) => l.problem)).toEqual([
      expect.stringMatching(/^tlsRpt\.reportFrom: tlsrpt@not-linked-mail\.net cannot send on channel .*forbidden/),
    ]);
    const { domain, mailbox } = await policyDomain(d);
    await d.tlsRpt.runNow();
    expect(logged(/TLS-RPT report delivery failed/, 40)[0]).toMatchObject({ rua: `mailto:${mailbox}`, error: expect.stringMatching(/submission refused the report: forbidden/) });
    expect(await d.store.tlsRpt.report(day, domain)).toMatchObject({ pending: [`mailto:${mailbox}`], attempts: 1 });
    expect(await messagesTo(d, mailbox)).toEqual([]);
  });

  it("respects the channel's suppressions: a suppressed rua address gets nothing and is not tried again", async () => {
    const d = await run(configured());
    const { domain, mailbox } = await policyDomain(d);
    const api = (method: string, path: string, body?: unknown) => apiRequest(`http://127.0.0.1:${d.http.port}`, () => setup.apiKey, method, path, { body });
    const res = await api('POST', '/suppressions', { channelId: sender.channelId, mailType: 'transactional', emails: [mailbox] });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    await d.tlsRpt.runNow();
    expect(logged(/report not sent to this mailto: address/, 40)).toEqual([
      expect.objectContaining({ rua: `mailto:${mailbox}`, error: expect.stringMatching(/submission refused the report: recipients_suppressed/) }),
    ]);
    expect((await d.store.tlsRpt.report(day, domain))?.pending).toEqual([]);
    expect(await messagesTo(d, mailbox)).toEqual([]);
  });

  it('warns at start about a channel that does not exist', async () => {
    await run({ reportChannelId: '00000000-0000-4000-8000-000000000000', reportFrom: `tlsrpt@${sender.domain}` });
    expect(logged(/reports to mailto: addresses will be refused/, 40).map((l) => l.problem)).toEqual(['tlsRpt.reportChannelId: there is no channel 00000000-0000-4000-8000-000000000000']);
  });
});

describe('the tlsRpt mail settings', () => {
  it('are set together, as a channel id and an address', () => {
    const load = (overrides: Record<string, unknown>) => () => loadConfig({ env: {}, overrides: { dataDir: setup.dataDir, ...overrides } });
    expect(load({ 'tlsRpt.reportChannelId': sender.channelId })).toThrow(/"tlsRpt\.reportChannelId" and "tlsRpt\.reportFrom" must be set together/);
    expect(load({ 'tlsRpt.reportFrom': 'tlsrpt@mail-sender.net' })).toThrow(ConfigError);
    expect(load({ 'tlsRpt.reportChannelId': 'reports', 'tlsRpt.reportFrom': 'tlsrpt@mail-sender.net' })).toThrow(/reportChannelId" must be empty or a channel id/);
    expect(load({ 'tlsRpt.reportChannelId': sender.channelId, 'tlsRpt.reportFrom': 'tlsrpt@mail-sender.net\r\nBcc: x@elsewhere-mail.net' })).toThrow(/reportFrom" must be empty or an e-mail address/);
    expect(load({ 'tlsRpt.reportChannelId': sender.channelId.toUpperCase(), 'tlsRpt.reportFrom': 'tlsrpt@mail-sender.net' })().tlsRpt.reportChannelId).toBe(sender.channelId);
  });
});
