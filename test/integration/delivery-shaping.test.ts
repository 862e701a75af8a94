/**
 * Automatic shaping end to end on loopback (issue 35): two sources, 127.0.0.2 and 127.0.0.3, in
 * one pool, and an MX named like Yahoo's (mta5.am0.yahoodns.net) that answers MAIL FROM from
 * 127.0.0.2 with Yahoo's real [TSS04] deferral. The built-in rule suspends that source at Yahoo
 * for 2 hours: the deferred message and the rest of the mail go out through 127.0.0.3, the
 * source's part of GET /ops/sources shows the suspension, and once the fake clock passes its
 * end the source carries mail again. Time moves only through the fake clock.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LocalCoordination } from '../../src/coordination/local.js';
import { DeliveryService } from '../../src/delivery/dispatcher.js';
import { ShapingGate } from '../../src/delivery/shaping-gate.js';
import { SourceReport } from '../../src/delivery/source-report.js';
import type { DnsResolver } from '../../src/dns/resolver.js';
import { compileShapingRules } from '../../src/domain/shaping-match.js';
import { resolveSendingIps } from '../../src/domain/sending-ips.js';
import { createLogger } from '../../src/log/logger.js';
import { allSent, deliveryConfig, jobsOf, openTestStore, queueMessage, TEST_SMTP_TIMEOUTS, type TestStore } from '../support/delivery.js';
import { startDnsServer, testResolver, type TestDns } from '../support/dns-server.js';
import { FakeClock } from '../support/fake-clock.js';
import { startMxServer, type MxServer } from '../support/mx-server.js';
import { waitFor } from '../support/wait.js';

const SINK = '127.0.39.2';
const DOMAIN = 'shaped-yahoo.net';
const MX_HOST = 'mta5.am0.yahoodns.net';
const HOUR = 3_600_000;
const TSS04 = { code: 421, message: '4.7.0 [TSS04] Messages from 127.0.0.2 temporarily deferred due to unexpected volume or user complaints - 4.16.55.1; see https://postmaster.yahooinc.com/error-codes' };

let dns: TestDns;
let resolver: DnsResolver;
let mx: MxServer;
/** Whether the MX defers 127.0.0.2 (Yahoo stops once the sender backed off). */
let deferIp2 = true;
let t: TestStore;
let service: DeliveryService | undefined;
let dir: string;

beforeAll(async () => {
  dns = await startDnsServer();
  resolver = testResolver(dns, { cache: true });
  mx = await startMxServer({ address: SINK, starttls: false, mailFromReply: (peer) => (peer === '127.0.0.2' && deferIp2 ? TSS04 : undefined) });
  dns.set(DOMAIN, 'MX', [{ priority: 10, exchange: MX_HOST }]);
  dns.set(MX_HOST, 'A', [SINK]);
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-delivery-shaping-'));
});

afterAll(async () => {
  resolver.stop();
  await Promise.all([dns.close(), mx.close()]);
  fs.rmSync(dir, { recursive: true, force: true });
});

afterEach(async () => {
  await service?.stop();
  service = undefined;
  await t?.close();
});

const SOURCES = {
  'delivery.sources': [
    { name: 'ip2', address: '127.0.0.2', ehloName: 'mta2.sender.test' },
    { name: 'ip3', address: '127.0.0.3', ehloName: 'mta3.sender.test' },
  ],
  'delivery.pools': { tx: [{ source: 'ip2', weight: 1 }, { source: 'ip3', weight: 1 }] },
  'delivery.defaultPools.transactional': 'tx',
};

/** Messages the sink received for recipients starting with `tag`, counted by peer address. */
function peers(tag: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of mx.received.filter((x) => x.to[0]!.startsWith(`${tag}-`))) out[r.remoteAddress] = (out[r.remoteAddress] ?? 0) + 1;
  return out;
}

describe('automatic shaping on loopback', () => {
  it('suspends the source Yahoo deferred with [TSS04], sends through the other, shows it, and sends from it again after 2 h', async () => {
    t = await openTestStore();
    const clock = new FakeClock(Date.now());
    const lines: Record<string, unknown>[] = [];
    const logger = createLogger({ level: 'info', destination: { write: (s: string) => void lines.push(JSON.parse(s) as Record<string, unknown>) } });
    const coordination = LocalCoordination.forDataDir(dir, { clock });
    const shaping = new ShapingGate({ coordination, rules: compileShapingRules(), logger, clock });
    const config = deliveryConfig({ 'delivery.port': mx.port, 'delivery.rate': 1000, ...SOURCES });
    service = new DeliveryService({ store: t.store, config, resolver, logger, clock, coordination, sourceGates: [shaping], timeouts: TEST_SMTP_TIMEOUTS });
    await service.start();
    const send = async (tag: string, n: number) => {
      const ids: string[] = [];
      for (let i = 0; i < n; i++) ids.push(await queueMessage(t.store, { to: [`${tag}-${i}@${DOMAIN}`], now: new Date(clock.now()) }));
      service!.notify();
      return ids;
    };

    // The pool alternates: the first two messages go one through each source; ip2's is deferred.
    const first = await send('first', 2);
    await waitFor(() => shaping.check('ip2', MX_HOST, clock.now()) !== undefined, { what: 'ip2 suspended at Yahoo' });
    await waitFor(async () => (await Promise.all(first.map((id) => jobsOf(t.store, id)))).every((jobs) => jobs[0]!.attempts === 1), { what: 'both first attempts recorded' });
    deferIp2 = false;
    expect(lines.filter((l) => l.level === 40 && l.rule === 'yahoo-tss04')).toMatchObject([{ source: 'ip2', site: 'provider:yahoo', action: 'suspend', until: new Date(clock.now() + 2 * HOUR).toISOString() }]);

    // The rest of the mail, and the deferred message at its retry, go through ip3 only.
    const rest = await send('rest', 20);
    await waitFor(() => allSent(t.store, rest), { what: '20 messages sent' });
    clock.advance(5 * 60_000);
    service.notify();
    await waitFor(() => allSent(t.store, first), { what: 'the deferred message sent at its retry' });
    expect(peers('rest')).toEqual({ '127.0.0.3': 20 });
    expect(peers('first')).toEqual({ '127.0.0.3': 2 });

    // What GET /ops/sources shows of the sources.
    const report = new SourceReport({ ips: resolveSendingIps(config.delivery, config.hostname), dns: resolver, gates: [shaping], now: () => clock.now() });
    const [ip2, ip3] = await report.list();
    expect(ip2!.shaping).toMatchObject({ active: [{ site: 'provider:yahoo', triggeredBy: MX_HOST, rule: 'yahoo-tss04', action: { kind: 'suspend' } }] });
    expect(ip3!.shaping).toBeUndefined();

    // Past its end: lifted (one info line), and ip2 carries its share again.
    clock.advance(2 * HOUR);
    const later = await send('later', 10);
    await waitFor(() => allSent(t.store, later), { what: '10 messages sent after the suspension' });
    expect(peers('later')).toEqual({ '127.0.0.2': 5, '127.0.0.3': 5 });
    expect(lines.filter((l) => l.msg === 'automatic shaping ended: its time is up')).toMatchObject([{ source: 'ip2', site: 'provider:yahoo', rule: 'yahoo-tss04' }]);
    expect((await report.list())[0]!.shaping).toBeUndefined();
  });
});
