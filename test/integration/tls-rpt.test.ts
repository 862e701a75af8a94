/**
 * TLS-RPT (RFC 8460) end to end on loopback: counts in a real store, the `_smtp._tls` record
 * from a real DNS server (dns2), reports POSTed to a real HTTPS receiver with a test CA, time
 * on a fake clock.
 */
import { gunzipSync } from 'node:zlib';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LocalCoordination } from '../../src/coordination/local.js';
import type { DnsResolver } from '../../src/dns/resolver.js';
import { createLogger } from '../../src/log/logger.js';
import { TlsRptService, type TlsRptConfig } from '../../src/tls-rpt/service.js';
import type { TlsResultInput } from '../../src/domain/tls-rpt.js';
import { openTestStore, type TestStore } from '../support/delivery.js';
import { startDnsServer, testResolver, type TestDns } from '../support/dns-server.js';
import { FakeClock } from '../support/fake-clock.js';
import { startReportServer, type ReportServer } from '../support/tls-rpt-server.js';

let dns: TestDns;
let resolver: DnsResolver;
let server: ReportServer;
let t: TestStore;
let svc: TlsRptService | undefined;
let clock: FakeClock;
/** The service's coordination (start() makes one per start, on the clock). */
let coordination: LocalCoordination;
let logLines: { level: number; msg: string; [k: string]: unknown }[] = [];

const HOUR = 3_600_000;
const sts = { type: 'sts' as const, string: ['version: STSv1', 'mode: enforce', 'mx: mx.rcpt.example', 'max_age: 86400'], mxHost: 'mx.rcpt.example' };

beforeAll(async () => {
  dns = await startDnsServer();
  resolver = testResolver(dns);
  server = await startReportServer();
});

afterAll(async () => {
  resolver.stop();
  await dns.close();
  await server.close();
});

afterEach(async () => {
  await svc?.stop();
  svc = undefined;
  await t?.close();
  dns.clear();
  server.received.length = 0;
  logLines = [];
});

async function start(o: { config?: Partial<TlsRptConfig>; retryDelaysMs?: number[]; reuseStore?: boolean } = {}): Promise<TlsRptService> {
  if (!o.reuseStore) {
    t = await openTestStore();
    clock = new FakeClock(Date.UTC(2025, 0, 6, 9, 0, 0));
  }
  coordination = new LocalCoordination({ nodeId: 'test', clock });
  const logger = createLogger({ level: 'debug', destination: { write: (s: string) => void logLines.push(JSON.parse(s)) } });
  const config: TlsRptConfig = { enabled: true, organizationName: 'Postrider Test', contactInfo: 'tlsrpt@sender.example', keepDays: 7, allowPrivate: true, caFile: server.caFile, ...o.config };
  svc = new TlsRptService({ store: t.store, resolver, config, hostname: 'mta.sender.example', coordination, logger, clock, reportDelayMs: 10 * 60_000, retryDelaysMs: o.retryDelaysMs, postTimeoutMs: 3000 });
  await svc.start();
  return svc;
}

/** The recipient domain asks for reports at https://rpt.<domain>:<port>/tlsrpt (and more URIs if given). */
function publish(domain: string, opts: { status?: number; record?: string } = {}): string {
  const uri = `https://rpt.${domain}:${server.port}/tlsrpt`;
  dns.set(`_smtp._tls.${domain}`, 'TXT', ['v=spf1 -all', opts.record ?? `v=TLSRPTv1; rua=${uri}`]);
  dns.set(`rpt.${domain}`, 'A', ['127.0.0.1']);
  server.serve(`rpt.${domain}`, opts.status ?? 200);
  return uri;
}

function recordDay(s: TlsRptService, domain: string, successes: number, failures: number): void {
  const ok: TlsResultInput = { policyDomain: domain, policy: sts, result: 'success' };
  const bad: TlsResultInput = { policyDomain: domain, policy: sts, result: { type: 'certificate-expired', sendingMtaIp: '192.0.2.1', receivingMxHostname: 'mx.rcpt.example', receivingIp: '198.51.100.7' } };
  for (let i = 0; i < successes; i++) s.recordTlsResult(ok);
  for (let i = 0; i < failures; i++) s.recordTlsResult(bad);
}

function logged(msg: RegExp, level = 30): typeof logLines {
  return logLines.filter((l) => l.level >= level && msg.test(l.msg));
}

/** To 00:30 UTC of the next day, past the report delay; fires the tick timer once. */
function nextDay(): void {
  const midnight = Math.ceil(clock.ms / (24 * HOUR)) * 24 * HOUR;
  clock.advance(midnight + 30 * 60_000 - clock.ms);
}

describe('TLS-RPT', () => {
  it('sums many results in memory into one entry per policy in the store, across flushes and a clean stop', async () => {
    const s = await start();
    recordDay(s, 'rcpt.example', 3000, 40);
    await s.flush();
    recordDay(s, 'Rcpt.Example.', 2000, 2);
    s.recordTlsResult({ policyDomain: 'rcpt.example', policy: { type: 'no-policy-found' }, result: { type: 'starttls-not-supported', receivingMxHostname: 'mx2.rcpt.example' } });
    await s.stop();
    svc = undefined;
    await t.reopen();
    const counts = await t.store.tlsRpt.counts('2025-01-06', 'rcpt.example');
    expect(counts.map((c) => [c.policy.type, c.success, c.failures.map((f) => [f.failure.type, f.count])])).toEqual(
      expect.arrayContaining([
        ['sts', 5000, [['certificate-expired', 42]]],
        ['no-policy-found', 0, [['starttls-not-supported', 1]]],
      ]),
    );
    expect(counts).toHaveLength(2);
  });

  it('after the day ends, POSTs the gzipped RFC 8460 report to the https rua, once', async () => {
    const s = await start();
    const uri = publish('rcpt.example');
    recordDay(s, 'rcpt.example', 5, 2);
    nextDay();
    await s.idle();
    expect(server.received).toHaveLength(1);
    const [got] = server.received;
    expect(got).toMatchObject({ host: 'rpt.rcpt.example', path: '/tlsrpt', contentType: 'application/tlsrpt+gzip' });
    const report = JSON.parse(gunzipSync(got.body).toString('utf8')) as Record<string, unknown>;
    expect(report).toEqual({
      'organization-name': 'Postrider Test',
      'date-range': { 'start-datetime': '2025-01-06T00:00:00Z', 'end-datetime': '2025-01-06T23:59:59Z' },
      'contact-info': 'tlsrpt@sender.example',
      'report-id': expect.stringMatching(/^2025-01-06_rcpt\.example_[0-9a-f-]{36}$/),
      policies: [
        {
          policy: { 'policy-type': 'sts', 'policy-string': sts.string, 'policy-domain': 'rcpt.example', 'mx-host': 'mx.rcpt.example' },
          summary: { 'total-successful-session-count': 5, 'total-failure-session-count': 2 },
          'failure-details': [
            { 'result-type': 'certificate-expired', 'sending-mta-ip': '192.0.2.1', 'receiving-mx-hostname': 'mx.rcpt.example', 'receiving-ip': '198.51.100.7', 'failed-session-count': 2 },
          ],
        },
      ],
    });
    expect(logged(/report delivered/)[0]).toMatchObject({ rua: uri, policyDomain: 'rcpt.example' });
    await s.runNow();
    clock.advance(HOUR);
    await s.runNow();
    expect(server.received).toHaveLength(1);
  });

  it('leaves the day’s reports to the holder of their leadership: its runs meanwhile only flush the counts', async () => {
    const s = await start();
    // Another node leads the reports (a day and more of the fake clock).
    const held = await coordination.lead('tls-rpt-reports', 48 * HOUR);
    publish('rcpt.example');
    recordDay(s, 'rcpt.example', 5, 2);
    nextDay();
    await s.idle();
    expect(server.received).toHaveLength(0);
    // This node's counts are in the store for the leader to report.
    expect(await t.store.tlsRpt.counts('2025-01-06', 'rcpt.example')).toHaveLength(1);

    await held!.release();
    await s.runNow();
    expect(server.received).toHaveLength(1);
  });

  it('uses the hostname for organization-name and postmaster@hostname for contact-info when they are not configured', async () => {
    const s = await start({ config: { organizationName: '', contactInfo: '' } });
    publish('plain.example');
    recordDay(s, 'plain.example', 1, 0);
    nextDay();
    await s.runNow();
    const report = JSON.parse(gunzipSync(server.received[0].body).toString('utf8')) as Record<string, unknown>;
    expect(report['organization-name']).toBe('mta.sender.example');
    expect(report['contact-info']).toBe('postmaster@mta.sender.example');
  });

  it.each([
    ['another version', 'v=TLSRPTv2; rua=https://rpt.odd.example/x', /takes no reports/],
    ['no rua', 'v=TLSRPTv1; ruf=https://rpt.odd.example/x', /takes no reports/],
  ])('sends nothing for a record with %s, and says so', async (_name, record, msg) => {
    const s = await start();
    publish('odd.example', { record });
    recordDay(s, 'odd.example', 3, 0);
    nextDay();
    await s.idle();
    await s.runNow();
    expect(server.received).toHaveLength(0);
    expect(logged(msg)).toHaveLength(1);
    expect((await t.store.tlsRpt.report('2025-01-06', 'odd.example'))?.pending).toEqual([]);
  });

  it('retries a failed POST after the retry delays, then gives up with a warning', async () => {
    const s = await start({ retryDelaysMs: [HOUR, 2 * HOUR] });
    publish('down.example', { status: 503 });
    recordDay(s, 'down.example', 1, 0);
    nextDay();
    await s.idle();
    expect(server.received).toHaveLength(1);
    clock.advance(HOUR - 1000);
    await s.runNow();
    expect(server.received).toHaveLength(1);
    clock.advance(1000);
    await s.runNow();
    expect(server.received).toHaveLength(2);
    clock.advance(2 * HOUR);
    await s.runNow();
    expect(server.received).toHaveLength(3);
    expect(logged(/delivery failed/, 40).map((l) => l.error)).toEqual(Array(3).fill(expect.stringContaining('HTTP 503')));
    expect(logged(/given up/, 40)).toHaveLength(1);
    clock.advance(24 * HOUR);
    await s.runNow();
    expect(server.received).toHaveLength(3);
  });

  it('delivers to the https rua and refuses mailto with a warning', async () => {
    const s = await start();
    const https = `https://rpt.both.example:${server.port}/tlsrpt`;
    publish('both.example', { record: `v=TLSRPTv1; rua=mailto:tls@both.example,${https}` });
    recordDay(s, 'both.example', 1, 0);
    nextDay();
    await s.idle();
    expect(server.received).toHaveLength(1);
    expect(logged(/mailto: report addresses are not supported/, 40)[0]).toMatchObject({ rua: 'mailto:tls@both.example' });
    expect((await t.store.tlsRpt.report('2025-01-06', 'both.example'))?.pending).toEqual([]);
  });

  it('does not POST to a loopback address without allowPrivate, nor to a host whose certificate the CA did not issue', async () => {
    const s = await start({ config: { allowPrivate: false }, retryDelaysMs: [] });
    publish('lan.example');
    recordDay(s, 'lan.example', 1, 0);
    nextDay();
    await s.idle();
    expect(server.received).toHaveLength(0);
    expect(logged(/delivery failed/, 40)[0].error).toMatch(/non-public addresses/);
    await s.stop();

    const s2 = await start({ retryDelaysMs: [], reuseStore: true });
    publish('selfsigned.example');
    server.serve('rpt.selfsigned.example', 200, true);
    recordDay(s2, 'selfsigned.example', 1, 0);
    nextDay();
    await s2.runNow();
    expect(server.received).toHaveLength(0);
    expect(logged(/delivery failed/, 40).at(-1)?.error).toMatch(/SELF_SIGNED|self-signed/i);
  });

  it('removes counts and reports older than keepDays', async () => {
    const s = await start({ config: { keepDays: 2 } });
    publish('old.example');
    recordDay(s, 'old.example', 1, 0);
    nextDay();
    await s.idle();
    expect(await t.store.tlsRpt.report('2025-01-06', 'old.example')).toBeDefined();
    clock.advance(2 * 24 * HOUR);
    await s.runNow();
    expect(await t.store.tlsRpt.counts('2025-01-06', 'old.example')).toEqual([]);
    expect(await t.store.tlsRpt.report('2025-01-06', 'old.example')).toBeUndefined();
  });

  it('records nothing when disabled', async () => {
    const s = await start({ config: { enabled: false } });
    recordDay(s, 'off.example', 3, 1);
    await s.flush();
    expect(await t.store.tlsRpt.counts('2025-01-06', 'off.example')).toEqual([]);
  });
});
