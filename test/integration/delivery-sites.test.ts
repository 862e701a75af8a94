/**
 * Destinations, not domains (issue #20): concurrency is counted per MX site, the set of MX
 * hosts, with real SMTP servers on 127.0.35.x. The receiving servers hold every DATA reply
 * until the test lets it go, so "at most N at once" is checked by waiting for N held messages,
 * then for a sentinel delivery that could only happen after the dispatcher planned again, and
 * then looking whether an N+1th appeared: no sleeping.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { DeliveryService } from '../../src/delivery/dispatcher.js';
import type { DnsResolver } from '../../src/dns/resolver.js';
import { createLogger } from '../../src/log/logger.js';
import { routeTo } from '../support/delivery-rig.js';
import { allSent, deliveryConfig, openTestStore, queueMessage, silentLogger, type TestStore } from '../support/delivery.js';
import { startDnsServer, testResolver, type TestDns } from '../support/dns-server.js';
import { FakeClock } from '../support/fake-clock.js';
import { startGateMx, type GateMx } from '../support/gate-mx.js';
import { startMxServer, type MxServer } from '../support/mx-server.js';
import { waitFor } from '../support/wait.js';

let dns: TestDns;
let resolver: DnsResolver;
let t: TestStore;
let service: DeliveryService | undefined;
let shared: GateMx;
let sentinelMx: MxServer;

beforeAll(async () => {
  dns = await startDnsServer();
  resolver = testResolver(dns, { cache: true });
  shared = await startGateMx('127.0.35.2');
  sentinelMx = await startMxServer({ address: '127.0.35.3', port: shared.port, starttls: false });
  // Two customers hosted by one provider: their MX records name the same hosts.
  dns.set('alpha-mail.net', 'MX', ['10 mx1.provider-mail.net', '20 mx2.provider-mail.net']);
  dns.set('beta-mail.net', 'MX', ['20 mx2.provider-mail.net', '10 mx1.provider-mail.net']);
  dns.set('mx1.provider-mail.net', 'A', ['127.0.35.2']);
  dns.set('mx2.provider-mail.net', 'A', ['127.0.35.2']);
  routeTo(dns, 'sentinel-mail.net', '127.0.35.3');
});

afterAll(async () => {
  resolver.stop();
  await Promise.all([dns.close(), shared.close(), sentinelMx.close()]);
});

beforeEach(() => shared.reset());

afterEach(async () => {
  shared.open();
  await service?.stop();
  service = undefined;
  await t?.close();
});

const sent = async (id: string) => (await t.store.messages.get(id))?.status === 'sent';

/** Queues a message to the sentinel domain (its own MX) and waits for its delivery: proof that the dispatcher planned after what came before. */
async function sentinel(now?: Date): Promise<void> {
  const id = await queueMessage(t.store, { to: ['watch@sentinel-mail.net'], now });
  service!.notify();
  await waitFor(() => sent(id), { what: 'the sentinel message' });
}

/** A dispatcher on the test's store delivering to the shared MX's port, fast, with `overrides`. */
async function startService(overrides: Record<string, unknown>): Promise<void> {
  service = new DeliveryService({
    store: t.store,
    config: deliveryConfig({ 'delivery.port': shared.port, 'delivery.rate': 1000, ...overrides }),
    resolver,
    logger: silentLogger(),
  });
  await service.start();
}

describe('concurrency per MX site', () => {
  it('gives two recipient domains whose MX records name the same hosts one budget', async () => {
    t = await openTestStore();
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push(await queueMessage(t.store, { to: [`a${i}@alpha-mail.net`] }));
    for (let i = 0; i < 4; i++) ids.push(await queueMessage(t.store, { to: [`b${i}@beta-mail.net`] }));
    // Counted per domain, this would be 2 + 2 sessions at the shared hosts.
    await startService({ 'delivery.perDomainConcurrency': 2 });
    await waitFor(() => shared.held >= 2, { what: 'two messages held at the shared MX' });
    await sentinel();
    expect(shared.held).toBe(2);
    shared.open();
    await waitFor(() => allSent(t.store, ids), { what: 'all 8 messages' });
    expect(shared.maxHeld).toBe(2);
    expect(shared.received).toHaveLength(8);
  });

  it("holds back a probe that finds its site full: the other domain's attempts took the room while it looked the site up", async () => {
    t = await openTestStore();
    // beta's MX answer waits: alpha's probe learns the site first and its second attempt fills it.
    const releaseBeta = dns.hold('beta-mail.net');
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push(await queueMessage(t.store, { to: [`a${i}@alpha-mail.net`] }));
    ids.push(await queueMessage(t.store, { to: ['b0@beta-mail.net'] }));
    await startService({ 'delivery.perDomainConcurrency': 2 });
    await waitFor(() => shared.held >= 2, { what: "alpha's two messages held at the shared MX" });
    releaseBeta();
    await waitFor(() => service!.siteOf('beta-mail.net') === service!.siteOf('alpha-mail.net'), { what: "beta's probe learning the site" });
    await sentinel();
    expect(shared.held).toBe(2);
    shared.open();
    await waitFor(() => allSent(t.store, ids), { what: 'all 4 messages' });
    expect(shared.maxHeld).toBe(2);
    expect(shared.received).toHaveLength(4);
  });

  it('lets a delivery.sites override set the budget of a site by MX suffix', async () => {
    t = await openTestStore();
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push(await queueMessage(t.store, { to: [`a${i}@alpha-mail.net`] }));
    service = new DeliveryService({
      store: t.store,
      config: deliveryConfig({
        'delivery.port': shared.port,
        'delivery.rate': 1000,
        'delivery.perDomainConcurrency': 1,
        'delivery.sites': { 'provider-mail.net': { concurrency: 3 } },
      }),
      resolver,
      logger: silentLogger(),
    });
    await service.start();
    await waitFor(() => shared.held >= 3, { what: 'three messages held at the shared MX' });
    await sentinel();
    expect(shared.held).toBe(3);
    shared.open();
    await waitFor(() => allSent(t.store, ids), { what: 'all 6 messages' });
    expect(shared.maxHeld).toBe(3);
  });
});

describe('slow down', () => {
  it('halves a site\'s concurrency on a rate-limit reply, logs it once, and raises it again after a quiet minute', async () => {
    t = await openTestStore();
    const clock = new FakeClock(Date.now());
    const lines: string[] = [];
    const logger = createLogger({ level: 'info', destination: { write: (s: string) => void lines.push(s) } });
    service = new DeliveryService({
      store: t.store,
      config: deliveryConfig({ 'delivery.port': shared.port, 'delivery.rate': 1000, 'delivery.perDomainConcurrency': 4 }),
      resolver,
      logger,
      clock,
    });
    await service.start();
    // Gmail's reply when a sender goes too fast (bounce-rules.ts: rate-limit).
    shared.script.push({ code: 450, message: '4.7.28 Our system has detected an unusual rate of unsolicited mail. To protect our users, this message has been temporarily rate limited.' });
    const first = await queueMessage(t.store, { to: ['x@alpha-mail.net'], now: new Date(clock.now()) });
    service.notify();
    await waitFor(async () => (await t.store.queue.jobsOfMessage(first))[0]?.attempts === 1, { what: 'the throttled attempt recorded' });

    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push(await queueMessage(t.store, { to: [`a${i}@alpha-mail.net`], now: new Date(clock.now()) }));
    service.notify();
    await waitFor(() => shared.held >= 2, { what: 'two messages held (4 halved)' });
    await sentinel(new Date(clock.now()));
    expect(shared.held).toBe(2);

    clock.advance(60_000); // a quiet minute: one step back up
    await sentinel(new Date(clock.now()));
    await waitFor(() => shared.held >= 3, { what: 'a third message held after the quiet period' });
    shared.open();
    await waitFor(() => allSent(t.store, ids), { what: 'all 6 messages' });
    const changes = lines.map((l) => JSON.parse(l) as { msg: string; site?: string; concurrency?: number }).filter((l) => /site concurrency/.test(l.msg));
    expect(changes.map((c) => [c.site, c.concurrency])).toEqual([
      ['mx1.provider-mail.net,mx2.provider-mail.net', 2],
      ['mx1.provider-mail.net,mx2.provider-mail.net', 3],
    ]);
  });
});

describe('delivery.sites in a config file', () => {
  it('is one key whose value is an object keyed by MX suffix', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-sites-'));
    try {
      const file = path.join(dir, 'postrider.jsonc');
      fs.writeFileSync(file, '{ "delivery": { "perDomainConcurrency": 2, "sites": { "*.provider-mail.net": { "concurrency": 6 } } } }');
      const config = loadConfig({ configPath: file, env: {} });
      expect(config.delivery.sites).toEqual({ '*.provider-mail.net': { concurrency: 6 } });
      fs.writeFileSync(file, '{ "delivery": { "sites": { "provider-mail.net": { "concurency": 6 } } } }');
      expect(() => loadConfig({ configPath: file, env: {} })).toThrow(/"delivery\.sites" at \/provider-mail\.net\/concurency: unexpected property/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
