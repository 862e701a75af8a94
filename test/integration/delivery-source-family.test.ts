/**
 * Sending IPs of both address families (issue 35): a socket bound to an IPv6 source cannot reach
 * an IPv4 MX address, nor an IPv4 source an IPv6 one (EINVAL at connect, before a packet). On
 * loopback: the sources ::1 and 127.0.0.2, a sink MX on ::1 that is the AAAA of a dual-stack MX
 * host listed after five A addresses (as many as an attempt tries), and a sink on 127.0.40.7,
 * the one address of an IPv4-only MX host.
 *
 * An IPv6-only pool tries only the IPv6 addresses; where there are none it defers with a reply
 * saying so, never "bind EINVAL", and the gates see no connection that opened nothing (the
 * health gate would take the source out for it). A pool of both families sends mail to the
 * IPv4-only MX from its IPv4 source only, every message at its first attempt.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { AttemptResult } from '../../src/domain/delivery-result.js';
import type { DeliveryService } from '../../src/delivery/dispatcher.js';
import type { SourceGate } from '../../src/delivery/source-gates.js';
import type { DnsResolver } from '../../src/dns/resolver.js';
import { allSent, jobsOf, openTestStore, queueMessage, testDeliveryService, type TestStore } from '../support/delivery.js';
import { startDnsServer, testResolver, type TestDns } from '../support/dns-server.js';
import { startMxServers, type MxServer } from '../support/mx-server.js';
import { waitFor } from '../support/wait.js';

const DUAL = 'dual-stack.net';
const V4_ONLY = 'v4-only.net';
const V6 = { name: 'v6', address: '::1', ehloName: 'mta6.sender.test' };
const V4 = { name: 'v4', address: '127.0.0.2', ehloName: 'mta4.sender.test' };

let dns: TestDns;
let resolver: DnsResolver;
let mx6: MxServer;
let mx4: MxServer;
let t: TestStore | undefined;
let service: DeliveryService | undefined;
const results: AttemptResult[] = [];

beforeAll(async () => {
  dns = await startDnsServer();
  resolver = testResolver(dns, { cache: true });
  [mx6, mx4] = await startMxServers(['::1', '127.0.40.7'], { starttls: false });
  dns.set(DUAL, 'MX', [{ priority: 10, exchange: `mx.${DUAL}` }]);
  // Nothing listens on these: they are only there to come first.
  dns.set(`mx.${DUAL}`, 'A', ['127.0.40.2', '127.0.40.3', '127.0.40.4', '127.0.40.5', '127.0.40.6']);
  dns.set(`mx.${DUAL}`, 'AAAA', ['::1']);
  dns.set(V4_ONLY, 'MX', [{ priority: 10, exchange: `mx.${V4_ONLY}` }]);
  dns.set(`mx.${V4_ONLY}`, 'A', ['127.0.40.7']);
});

afterAll(async () => {
  resolver.stop();
  await Promise.all([dns.close(), mx6.close(), mx4.close()]);
});

afterEach(async () => {
  await service?.stop();
  service = undefined;
  await t?.close();
  t = undefined;
  results.length = 0;
  mx6.received.length = 0;
  mx4.received.length = 0;
});

async function start(overrides: Record<string, unknown>): Promise<void> {
  t = await openTestStore();
  const gate: SourceGate = { name: 'test', check: () => undefined, observe: (_a, result) => results.push(result) };
  service = testDeliveryService(t.store, resolver, { 'delivery.port': mx6.port, 'delivery.rate': 1000, ...overrides }, { sourceGates: [gate] });
  await service.start();
}

describe('a source of one address family', () => {
  it("reaches a dual-stack MX host at its address of the source's family, whatever comes before it", async () => {
    await start({ 'delivery.sources': [V6] });
    const id = await queueMessage(t!.store, { to: [`someone@${DUAL}`] });
    service!.notify();
    await waitFor(() => allSent(t!.store, [id]), { what: 'the message delivered over IPv6' });
    expect(mx6.received.map((r) => [r.remoteAddress, r.heloName])).toEqual([['::1', 'mta6.sender.test']]);
    expect((await jobsOf(t!.store, id))[0]!.history).toHaveLength(1);
  });

  it('defers mail to an MX with no address of its family, saying so, and counts no failed connection against it', async () => {
    await start({ 'delivery.sources': [V6] });
    const id = await queueMessage(t!.store, { to: [`someone@${V4_ONLY}`] });
    service!.notify();
    await waitFor(async () => (await jobsOf(t!.store, id))[0]?.history.length === 1, { what: 'the deferral' });
    const attempt = (await jobsOf(t!.store, id))[0]!.history[0]!;
    expect(attempt.outcome).toBe('deferred');
    expect(attempt.enhancedCode).toBe('4.4.4');
    expect(attempt.response).toBe(`MX hosts of ${V4_ONLY} have no IPv6 address, the only kind source "v6" (::1) can connect to`);
    expect(results).toHaveLength(1);
    expect(results[0]!.connectFailed).toBeUndefined();
    expect(mx4.received).toHaveLength(0);
  });
});

describe('a pool of both address families', () => {
  it('sends mail to an IPv4-only MX from its IPv4 source, each message at its first attempt', async () => {
    // The IPv6 source first by weight: the round robin would pick it three times in four.
    await start({ 'delivery.sources': [V6, V4], 'delivery.pools': { both: [{ source: 'v6', weight: 3 }, { source: 'v4', weight: 1 }] }, 'delivery.defaultPools.transactional': 'both' });
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) ids.push(await queueMessage(t!.store, { to: [`v4only-${i}@${V4_ONLY}`] }));
    service!.notify();
    await waitFor(() => allSent(t!.store, ids), { what: 'the messages to the IPv4-only MX delivered' });
    expect(mx4.received.map((r) => r.remoteAddress)).toEqual(Array(8).fill('127.0.0.2'));
    for (const id of ids) expect((await jobsOf(t!.store, id))[0]!.history).toHaveLength(1);
    expect(results.every((r) => r.connectFailed === undefined)).toBe(true);
  });
});
