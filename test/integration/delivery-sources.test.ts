/**
 * Sending IPs (issue 35) on loopback: two sources, 127.0.0.2 and 127.0.0.3 (all of 127/8 is
 * loopback on Linux, bindable without setup), a sink MX recording the peer address and EHLO
 * name of each message. Transactional and broadcast mail on their own pools by
 * delivery.defaultPools, a channel's ipPool winning over them, and a 3:1 pool's weights honoured
 * exactly (the chooser is deterministic: every attempt picks once).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { DeliveryService } from '../../src/delivery/dispatcher.js';
import type { DnsResolver } from '../../src/dns/resolver.js';
import { routeTo } from '../support/delivery-rig.js';
import { ACCOUNT, allSent, jobsOf, openTestStore, queueMessage, testDeliveryService, type TestStore } from '../support/delivery.js';
import { startDnsServer, testResolver, type TestDns } from '../support/dns-server.js';
import { startMxServer, type MxServer } from '../support/mx-server.js';
import { waitFor } from '../support/wait.js';
import type { GateRefusal, SourceAttempt, SourceGate } from '../../src/delivery/source-gates.js';

const SINK = '127.0.37.2';
const DOMAIN = 'sources-sink.net';
const SINK_SITE = `mx.${DOMAIN}`;

let dns: TestDns;
let resolver: DnsResolver;
let mx: MxServer;
let t: TestStore;
let service: DeliveryService | undefined;

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

const SOURCES = {
  'delivery.sources': [
    { name: 'ip2', address: '127.0.0.2', ehloName: 'mta2.sender.test' },
    { name: 'ip3', address: '127.0.0.3', ehloName: 'mta3.sender.test' },
  ],
  'delivery.pools': {
    tx: [
      { source: 'ip2', weight: 3 },
      { source: 'ip3', weight: 1 },
    ],
    bulk: [{ source: 'ip3', weight: 1 }],
  },
  'delivery.defaultPools.transactional': 'tx',
  'delivery.defaultPools.broadcast': 'bulk',
};

async function start(overrides: Record<string, unknown> = {}, gates: SourceGate[] = []): Promise<void> {
  t = await openTestStore();
  service = testDeliveryService(t.store, resolver, { 'delivery.port': mx.port, 'delivery.rate': 2000, ...SOURCES, ...overrides }, { sourceGates: gates });
  await service.start();
}

async function send(n: number, o: { mailType?: 'transactional' | 'broadcast'; channelId?: string; tag: string }): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) ids.push(await queueMessage(t.store, { to: [`${o.tag}-${i}@${DOMAIN}`], mailType: o.mailType, channelId: o.channelId }));
  service!.notify();
  await waitFor(() => allSent(t.store, ids), { what: `${n} ${o.tag} messages sent`, timeout: 60_000 });
  return ids;
}

/** Messages the sink received for recipients starting with `tag`, counted by peer address. */
function peers(tag: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of mx.received.filter((x) => x.to[0].startsWith(`${tag}-`))) out[r.remoteAddress] = (out[r.remoteAddress] ?? 0) + 1;
  return out;
}

describe('sending IPs on loopback', () => {
  it('sends transactional mail through its pool 3:1 by weight and broadcast mail through its own, each source with its EHLO name', async () => {
    await start();
    await send(400, { tag: 'tx' });
    await send(40, { mailType: 'broadcast', tag: 'bulk' });
    // Every attempt picks once and all were delivered at the first: exactly 3 of 4 picks.
    expect(peers('tx')).toEqual({ '127.0.0.2': 300, '127.0.0.3': 100 });
    expect(peers('bulk')).toEqual({ '127.0.0.3': 40 });
    const helo = new Map(mx.received.map((r) => [r.remoteAddress, r.heloName]));
    expect(Object.fromEntries(helo)).toEqual({ '127.0.0.2': 'mta2.sender.test', '127.0.0.3': 'mta3.sender.test' });
    expect(new Set(mx.received.filter((r) => r.remoteAddress === '127.0.0.2').map((r) => r.heloName))).toEqual(new Set(['mta2.sender.test']));
  });

  it("sends a channel's mail through its ipPool rather than its mail type's default pool", async () => {
    await start();
    const channel = await t.store.channels.create({ accountId: ACCOUNT, name: 'receipts', deliveryType: 'live', tracking: { links: false, opens: false }, ipPool: 'bulk', maxPerAccount: 10 });
    await send(20, { channelId: channel.id, tag: 'chan' });
    expect(peers('chan')).toEqual({ '127.0.0.3': 20 });
  });

  it("holds a source to its own rate beside delivery.rate (its own pacer at the receivers)", async () => {
    const sources = SOURCES['delivery.sources'].map((s) => (s.name === 'ip3' ? { ...s, rate: 10 } : s));
    await start({ 'delivery.sources': sources });
    const started = performance.now();
    await send(15, { mailType: 'broadcast', tag: 'paced' });
    // 15 messages at 10/s, evenly spaced ((1000 + 20) / 10 ms apart): at least 14 intervals,
    // where delivery.rate (2000/s) alone would take a few ms.
    expect(performance.now() - started).toBeGreaterThanOrEqual(1300);
    expect(peers('paced')).toEqual({ '127.0.0.3': 15 });
  });

  it('sends from the kernel’s choice of address with hostname in EHLO when no source is configured', async () => {
    await start({ 'delivery.sources': [], 'delivery.pools': {}, 'delivery.defaultPools.transactional': '', 'delivery.defaultPools.broadcast': '' });
    await send(4, { tag: 'kernel' });
    expect(peers('kernel')).toEqual({ '127.0.0.1': 4 });
    expect(new Set(mx.received.map((r) => r.heloName))).toEqual(new Set(['postrider.test']));
  });

  it("defers, never bounces, mail whose pool's sources the gates all refuse, naming each reason, and tells the gates each attempt", async () => {
    const observed: SourceAttempt[] = [];
    let closed = true;
    const gate: SourceGate = {
      name: 'test',
      check: (source): GateRefusal | undefined => (closed || source === 'ip3' ? { gate: 'test', reason: `${source} closed for the test` } : undefined),
      observe: (a) => observed.push(a),
    };
    await start({}, [gate]);
    const id = await queueMessage(t.store, { to: [`gated-0@${DOMAIN}`] });
    service!.notify();
    await waitFor(async () => (await jobsOf(t.store, id))[0]?.history.length === 1, { what: 'the deferral' });
    const [job] = await jobsOf(t.store, id);
    expect(job!.state).toBe('queued');
    expect(JSON.stringify(job!.history[0])).toContain('no source of IP pool \\"tx\\" may send now (ip2: ip2 closed for the test; ip3: ip3 closed for the test)');
    expect(JSON.stringify(job!.history[0])).toContain('"outcome":"deferred"');
    expect(mx.received).toHaveLength(0);
    expect(observed).toEqual([]);
    closed = false;
    await send(6, { tag: 'open' });
    // ip3 is still refused: ip2 carries all, and the gate saw each attempt with the MX site.
    expect(peers('open')).toEqual({ '127.0.0.2': 6 });
    expect(observed.map((a) => [a.source, a.pool, a.site])).toEqual(Array(6).fill(['ip2', 'tx', SINK_SITE]));
  });
});
