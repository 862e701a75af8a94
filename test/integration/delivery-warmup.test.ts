/**
 * Warm-up on loopback (issue 35): sources 127.0.0.2 (warming: 3 messages a day on day 1) and
 * 127.0.0.3 (warm), a sink MX recording each message's peer address, the dispatcher on a fake
 * clock. In one pool the warming source carries exactly its cap and the warm one the rest; in
 * a pool of the warming source alone the rest is deferred (never bounced), with the warm-up's
 * reason, and delivered once the clock passes the day boundary.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LocalCoordination } from '../../src/coordination/local.js';
import type { DeliveryService } from '../../src/delivery/dispatcher.js';
import { WarmupGate } from '../../src/delivery/warmup-gate.js';
import type { DnsResolver } from '../../src/dns/resolver.js';
import { resolveSendingIps, type SendingIpSettings } from '../../src/domain/sending-ips.js';
import { routeTo } from '../support/delivery-rig.js';
import { allSent, jobsOf, openTestStore, queueMessage, testDeliveryService, type TestStore } from '../support/delivery.js';
import { startDnsServer, testResolver, type TestDns } from '../support/dns-server.js';
import { FakeClock } from '../support/fake-clock.js';
import { startMxServer, type MxServer } from '../support/mx-server.js';
import { waitFor } from '../support/wait.js';

const SINK = '127.0.38.2';
const DOMAIN = 'warmup-sink.net';

let dns: TestDns;
let resolver: DnsResolver;
let mx: MxServer;
let t: TestStore;
let clock: FakeClock;
let service: DeliveryService | undefined;
let gate: WarmupGate;

beforeAll(async () => {
  dns = await startDnsServer();
  resolver = testResolver(dns, { cache: true });
  mx = await startMxServer({ address: SINK, starttls: false });
  routeTo(dns, DOMAIN, SINK);
});

afterAll(async () => {
  resolver.stop();
  await Promise.all([dns.close(), mx.close()]);
});

afterEach(async () => {
  await service?.stop();
  service = undefined;
  await t?.close();
  mx.received.length = 0;
});

/** 2025-01-06 09:00 UTC (FakeClock's default) is day 1 of the plan: 3 messages to each site that day, then no cap. */
const SOURCES: SendingIpSettings['sources'] = [
  { name: 'new', address: '127.0.0.2', ehloName: 'mta2.sender.test', warmup: { start: '2025-01-06', curve: [3] } },
  { name: 'old', address: '127.0.0.3', ehloName: 'mta3.sender.test' },
];

async function start(pool: string[], extra: Record<string, unknown> = {}): Promise<void> {
  t = await openTestStore();
  clock = new FakeClock();
  const settings: SendingIpSettings = { sources: SOURCES, pools: { tx: pool.map((source) => ({ source, weight: 1 })) }, defaultPools: { transactional: 'tx', broadcast: 'tx' } };
  gate = new WarmupGate({ ips: resolveSendingIps(settings, 'postrider.test'), coordination: new LocalCoordination({ nodeId: 'test', clock }), dns: resolver });
  const overrides = { 'delivery.port': mx.port, 'delivery.rate': 2000, 'delivery.sources': SOURCES, 'delivery.pools': settings.pools, 'delivery.defaultPools.transactional': 'tx', ...extra };
  service = testDeliveryService(t.store, resolver, overrides, { clock, idleCheckMs: 24 * 3_600_000, sourceGates: [gate] });
  await service.start();
}

async function queue(n: number, tag: string): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) ids.push(await queueMessage(t.store, { to: [`${tag}-${i}@${DOMAIN}`], now: new Date(clock.now()) }));
  service!.notify();
  return ids;
}

function peers(): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of mx.received) out[r.remoteAddress] = (out[r.remoteAddress] ?? 0) + 1;
  return out;
}

describe('warm-up on loopback', () => {
  it('lets the warming source carry exactly its cap of the day and the warm source of its pool the rest', async () => {
    await start(['new', 'old']);
    const ids = await queue(20, 'pair');
    await waitFor(() => allSent(t.store, ids), { what: '20 messages sent', timeout: 60_000 });
    expect(peers()).toEqual({ '127.0.0.2': 3, '127.0.0.3': 17 });
    // No attempt was deferred: a refused reservation went to the warm source at once.
    for (const id of ids) expect((await jobsOf(t.store, id))[0]!.history.map((h) => h.outcome)).toEqual(['delivered']);
    const view = await gate.view('new', clock.now());
    expect(view).toMatchObject({ start: '2025-01-06', day: 1, days: 1, complete: false });
    expect(view!.sites.find((s) => s.key === `mx.${DOMAIN}`)).toEqual({ key: `mx.${DOMAIN}`, curve: 'other', today: { sent: 3, cap: 3 }, thisHour: { sent: 3, cap: 3 } });
  });

  it('defers, never bounces, what a pool of the warming source alone may not carry today, and delivers it the next day', async () => {
    // Past delivery.maxAgeMs by the next day: a receiver's deferral would expire into a bounce,
    // a deferral for want of a source does not.
    await start(['new'], { 'delivery.maxAgeMs': 3_600_000 });
    const ids = await queue(8, 'alone');
    await waitFor(async () => (await Promise.all(ids.map((id) => jobsOf(t.store, id)))).every((jobs) => jobs[0]!.history.length >= 1), { what: 'every first attempt', timeout: 60_000 });
    expect(peers()).toEqual({ '127.0.0.2': 3 });
    const deferred = (await Promise.all(ids.map((id) => jobsOf(t.store, id)))).map((jobs) => jobs[0]!).filter((j) => j.state === 'queued');
    expect(deferred).toHaveLength(5);
    for (const job of deferred) {
      expect(job.history.map((h) => h.outcome)).toEqual(['deferred']);
      expect(JSON.stringify(job.history[0])).toContain(`warm-up: 3 of 3 messages to mx.${DOMAIN} today (day 1)`);
      // Due when the warm-up may send again (the refusal's until), not on the retry schedule (5 minutes).
      expect(Date.parse(job.dueAt)).toBeGreaterThan(clock.now() + 5 * 60_000);
      expect(Date.parse(job.dueAt)).toBeLessThanOrEqual(Date.UTC(2025, 0, 7));
    }
    // Past midnight UTC the curve has ended: the source is warm and the deferred mail goes.
    clock.advance(Date.UTC(2025, 0, 7, 0, 1) - clock.now());
    await waitFor(() => allSent(t.store, ids), { what: 'the deferred messages sent on day 2', timeout: 60_000 });
    expect(peers()).toEqual({ '127.0.0.2': 8 });
    const events = (await Promise.all(ids.map((id) => t.store.events.ofMessage(id)))).flat();
    expect(events.filter((e) => e.eventType === 'bounced')).toEqual([]);
    expect(events.filter((e) => e.eventType === 'delivered')).toHaveLength(8);
    expect(await gate.view('new', clock.now())).toMatchObject({ day: 2, complete: true });
  });

  it('does not count the wait for a source against delivery.maxAgeMs: a receiver deferral after it is retried, not expired', async () => {
    await start(['new'], { 'delivery.maxAgeMs': 3_600_000 });
    const ids = await queue(4, 'held');
    await waitFor(async () => (await Promise.all(ids.map((id) => jobsOf(t.store, id)))).every((jobs) => jobs[0]!.history.length >= 1), { what: 'every first attempt', timeout: 60_000 });
    const [held] = (await Promise.all(ids.map((id) => jobsOf(t.store, id)))).map((jobs) => jobs[0]!).filter((j) => j.state === 'queued');
    // Greylisted on day 2, 15 hours after its commit: one hour of age was spent, the rest waited for the warm-up.
    mx.scriptRcpt(held.recipients[0], { code: 451, message: '4.7.1 Greylisting in action, please come back later' });
    clock.advance(Date.UTC(2025, 0, 7, 0, 1) - clock.now());
    const retried = await waitFor(async () => {
      const [job] = await jobsOf(t.store, held.messageId);
      return job.history.length === 2 && job;
    }, { what: 'the attempt on day 2' });
    expect(retried).toMatchObject({ state: 'queued', history: [{ outcome: 'deferred' }, { outcome: 'deferred', smtpCode: 451 }] });
    expect((await t.store.events.ofMessage(held.messageId)).filter((e) => e.eventType === 'bounced')).toEqual([]);
    // Attempt 2 on the retry schedule (5m,10m,...): due 10 minutes later.
    expect(Date.parse(retried.dueAt) - Date.parse(retried.history[1].at)).toBe(10 * 60_000);
    await waitFor(() => clock.nextTimerAt() === Date.parse(retried.dueAt), { what: 'the retry timer' });
    clock.advance(Date.parse(retried.dueAt) - clock.now());
    await waitFor(() => allSent(t.store, [held.messageId]), { what: 'the greylisted message delivered on its retry' });
  });
});
