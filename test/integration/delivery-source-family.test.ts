/**
 * Sending IPs of one address family (issue 35): a socket bound to an IPv6 source cannot reach
 * an IPv4 MX address, nor an IPv4 source an IPv6 one (EINVAL at connect, before a packet). On
 * loopback: the source ::1, a sink MX on ::1 that is the AAAA of a dual-stack MX host listed
 * after five A addresses (as many as an attempt tries), and an MX host with A records only.
 * The attempt tries only the addresses of its source's family; where there are none it defers
 * with a reply saying so, never "bind EINVAL", and the gates see no connection that opened
 * nothing (the health gate would take the source out for it).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { AttemptResult } from '../../src/domain/delivery-result.js';
import type { DeliveryService } from '../../src/delivery/dispatcher.js';
import type { SourceGate } from '../../src/delivery/source-gates.js';
import type { DnsResolver } from '../../src/dns/resolver.js';
import { allSent, jobsOf, openTestStore, queueMessage, testDeliveryService, type TestStore } from '../support/delivery.js';
import { startDnsServer, testResolver, type TestDns } from '../support/dns-server.js';
import { startMxServer, type MxServer } from '../support/mx-server.js';
import { waitFor } from '../support/wait.js';

const DUAL = 'dual-stack.net';
const V4_ONLY = 'v4-only.net';

let dns: TestDns;
let resolver: DnsResolver;
let mx: MxServer;
let t: TestStore;
let service: DeliveryService | undefined;
const results: AttemptResult[] = [];

beforeAll(async () => {
  dns = await startDnsServer();
  resolver = testResolver(dns, { cache: true });
  mx = await startMxServer({ address: '::1', starttls: false });
  dns.set(DUAL, 'MX', [{ priority: 10, exchange: `mx.${DUAL}` }]);
  // Nothing listens on these: they are only there to come first.
  dns.set(`mx.${DUAL}`, 'A', ['127.0.40.2', '127.0.40.3', '127.0.40.4', '127.0.40.5', '127.0.40.6']);
  dns.set(`mx.${DUAL}`, 'AAAA', ['::1']);
  dns.set(V4_ONLY, 'MX', [{ priority: 10, exchange: `mx.${V4_ONLY}` }]);
  dns.set(`mx.${V4_ONLY}`, 'A', ['127.0.40.7']);
  t = await openTestStore();
  const gate: SourceGate = { name: 'test', check: () => undefined, observe: (_a, result) => results.push(result) };
  service = testDeliveryService(t.store, resolver, { 'delivery.port': mx.port, 'delivery.sources': [{ name: 'v6', address: '::1', ehloName: 'mta6.sender.test' }] }, { sourceGates: [gate] });
  await service.start();
});

afterAll(async () => {
  await service?.stop();
  await t?.close();
  resolver.stop();
  await Promise.all([dns.close(), mx.close()]);
});

afterEach(() => {
  results.length = 0;
});

describe('a source of one address family', () => {
  it("reaches a dual-stack MX host at its address of the source's family, whatever comes before it", async () => {
    const id = await queueMessage(t.store, { to: [`someone@${DUAL}`] });
    service!.notify();
    await waitFor(() => allSent(t.store, [id]), { what: 'the message delivered over IPv6' });
    expect(mx.received.map((r) => [r.remoteAddress, r.heloName])).toEqual([['::1', 'mta6.sender.test']]);
    expect((await jobsOf(t.store, id))[0]!.history).toHaveLength(1);
  });

  it('defers mail to an MX with no address of its family, saying so, and counts no failed connection against it', async () => {
    const id = await queueMessage(t.store, { to: [`someone@${V4_ONLY}`] });
    service!.notify();
    await waitFor(async () => (await jobsOf(t.store, id))[0]?.history.length === 1, { what: 'the deferral' });
    const attempt = (await jobsOf(t.store, id))[0]!.history[0]!;
    expect(attempt.outcome).toBe('deferred');
    expect(attempt.enhancedCode).toBe('4.4.4');
    expect(attempt.response).toBe(`MX hosts of ${V4_ONLY} have no IPv6 address, the only kind source "v6" (::1) can connect to`);
    expect(results).toHaveLength(1);
    expect(results[0]!.connectFailed).toBeUndefined();
  });
});
