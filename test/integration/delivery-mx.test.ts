/**
 * Delivery end to end: messages committed as the send path commits them, a real
 * DeliveryService, real DNS answers from the test DNS server and real SMTP servers as MX hosts
 * on loopback addresses (127.0.10.x). Never real DNS or a real MX.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DeliveryService } from '../../src/delivery/dispatcher.js';
import type { DnsResolver } from '../../src/dns/resolver.js';
import type { EventRecord } from '../../src/domain/types.js';
import { eventsOfMessage } from '../../src/store/events.js';
import { getMessage } from '../../src/store/messages.js';
import { isSuppressed } from '../../src/store/suppressions.js';
import { CHANNEL, deliveryConfig, jobsOf, openTestStore, queueMessage, rawMessage, silentLogger, type TestStore } from '../support/delivery.js';
import { startDnsServer, testResolver, type TestDns } from '../support/dns-server.js';
import { startMxServer, startMxServers, type MxServer } from '../support/mx-server.js';
import { waitFor } from '../support/wait.js';

let dns: TestDns;
let resolver: DnsResolver;
let mx1: MxServer;
let mx2: MxServer;
let plain: MxServer;
let t: TestStore;
let service: DeliveryService | undefined;
const DEAD = '127.0.10.9'; // nothing listens here: connection refused

beforeAll(async () => {
  dns = await startDnsServer();
  resolver = testResolver(dns);
  [mx1, mx2] = await startMxServers(['127.0.10.2', '127.0.10.3']);
  plain = await startMxServer({ address: '127.0.10.4', port: mx1.port, starttls: false });
  dns.set('mx1.example.test', 'A', ['127.0.10.2']);
  dns.set('mx2.example.test', 'A', ['127.0.10.3']);
  dns.set('plain.example.test', 'A', ['127.0.10.4']);
  dns.set('dead.example.test', 'A', [DEAD]);
});

afterAll(async () => {
  resolver.stop();
  await Promise.all([mx1.close(), mx2.close(), plain.close(), dns.close()]);
});

afterEach(async () => {
  await service?.stop();
  service = undefined;
  await t?.close();
});

async function startService(overrides: Record<string, unknown> = {}): Promise<DeliveryService> {
  t = await openTestStore();
  service = new DeliveryService({
    store: t.store,
    config: deliveryConfig({ 'delivery.port': mx1.port, ...overrides }),
    resolver,
    logger: silentLogger(),
    timeouts: { connectMs: 2000, greetingMs: 5000, commandMs: 5000, dataMs: 5000 },
  });
  await service.start();
  return service;
}

async function send(to: string[], from = 'news@sender.test'): Promise<string> {
  const id = await queueMessage(t.store, { to, from, body: rawMessage(from, to) });
  service!.notify();
  return id;
}

/** Waits until every job of the message is finished; returns its delivery events. */
async function settled(id: string): Promise<EventRecord[]> {
  await waitFor(() => getMessage(t.store, id)?.status === 'sent', { what: `message ${id} to be sent` });
  return eventsOfMessage(t.store, id).filter((e) => e.eventType === 'delivered' || e.eventType === 'bounced');
}

describe('delivery to MX hosts', () => {
  it('delivers a message to the MX over STARTTLS with the signed body, return path and EHLO name', async () => {
    dns.set('example.test', 'MX', ['10 mx1.example.test']);
    await startService();
    const before = mx1.received.length;
    const id = await send(['ann@example.test', 'bob@example.test']);
    const events = await settled(id);
    expect(events.map((e) => [e.eventType, e.recipients])).toEqual([['delivered', ['ann@example.test', 'bob@example.test']]]);
    expect(events[0].details).toMatchObject({ mx: 'mx1.example.test', tls: true, smtpCode: 250, attempt: 1 });
    const got = mx1.received[before];
    expect(got).toMatchObject({ from: `bounces+${id}@bounces.sender.test`, to: ['ann@example.test', 'bob@example.test'], secure: true, heloName: 'postrider.test' });
    expect(got.raw.toString()).toContain('.a line that starts with a dot');
    expect(got.raw.toString()).toContain('Subject: Hello');
    expect(jobsOf(t.store, id)[0]).toMatchObject({ state: 'done', attempts: 1 });
  });

  it('falls back to the next MX when the first one refuses the connection', async () => {
    dns.set('fallback.test', 'MX', ['10 dead.example.test', '20 mx2.example.test']);
    await startService();
    const id = await send(['cat@fallback.test']);
    const [event] = await settled(id);
    expect(event).toMatchObject({ eventType: 'delivered', details: { mx: 'mx2.example.test', tls: true } });
  });

  it('delivers to the accepted recipients and hard-bounces and suppresses the rejected one', async () => {
    dns.set('partial.test', 'MX', ['10 mx1.example.test']);
    mx1.scriptRcpt('gone@partial.test', { code: 550, message: '5.1.1 <gone@partial.test>: Recipient address rejected: User unknown' });
    await startService();
    const id = await send(['here@partial.test', 'gone@partial.test']);
    const events = await settled(id);
    expect(events.map((e) => [e.eventType, e.recipients, e.details.bounceType])).toEqual([
      ['delivered', ['here@partial.test'], undefined],
      ['bounced', ['gone@partial.test'], 'hard'],
    ]);
    expect(events[1].details).toMatchObject({ smtpCode: 550, enhancedCode: '5.1.1', category: 'unknown_user', mx: 'mx1.example.test' });
    expect(isSuppressed(t.store, CHANNEL, 'transactional', 'gone@partial.test')).toBe(true);
  });

  it('delivers through the implicit MX: the domain A record when there is no MX', async () => {
    dns.set('implicit.test', 'A', ['127.0.10.3']);
    await startService();
    const id = await send(['dan@implicit.test']);
    const [event] = await settled(id);
    expect(event).toMatchObject({ eventType: 'delivered', details: { mx: 'implicit.test' } });
  });

  it('bounces a domain with a null MX without connecting anywhere (RFC 7505)', async () => {
    dns.set('nomail.test', 'MX', ['0 .']);
    await startService();
    const id = await send(['eve@nomail.test']);
    const [event] = await settled(id);
    expect(event).toMatchObject({ eventType: 'bounced', details: { bounceType: 'hard', category: 'dns', smtpCode: 556, enhancedCode: '5.1.10' } });
  });

  it('bounces a recipient domain that does not exist', async () => {
    await startService();
    const id = await send(['fay@does-not-exist.test']);
    const [event] = await settled(id);
    expect(event).toMatchObject({ eventType: 'bounced', details: { bounceType: 'hard', enhancedCode: '5.1.2' } });
  });

  it('refuses to connect to a loopback MX when private addresses are not allowed', async () => {
    dns.set('internal.test', 'MX', ['10 mx1.example.test']);
    await startService({ 'delivery.allowPrivate': false });
    const connections = mx1.connections;
    const id = await send(['gus@internal.test']);
    const [event] = await settled(id);
    expect(event).toMatchObject({ eventType: 'bounced', details: { bounceType: 'soft', category: 'dns', enhancedCode: '5.4.4' } });
    expect(String(event.details.response)).toContain('127.0.10.2');
    expect(mx1.connections).toBe(connections);
  });

  it('sends in plain text to a server that does not offer STARTTLS and records tls false', async () => {
    dns.set('plain.test', 'MX', ['10 plain.example.test']);
    await startService();
    const id = await send(['hal@plain.test']);
    const [event] = await settled(id);
    expect(event).toMatchObject({ eventType: 'delivered', details: { mx: 'plain.example.test', tls: false } });
    expect(plain.received.at(-1)?.secure).toBe(false);
  });
});

describe('a failed STARTTLS handshake', () => {
  let broken: MxServer;

  beforeAll(async () => {
    // Offers STARTTLS but only anonymous ciphers, which no client offers: every handshake fails.
    broken = await startMxServer({ address: '127.0.10.5', port: mx1.port, tlsOptions: { maxVersion: 'TLSv1.2', ciphers: 'aNULL:@SECLEVEL=0' } });
    dns.set('broken-tls.example.test', 'A', ['127.0.10.5']);
  });

  afterAll(async () => {
    await broken.close();
  });

  it('delivers in plain text over a new connection (opportunistic TLS, RFC 7435) and records why', async () => {
    dns.set('brokentls.test', 'MX', ['10 broken-tls.example.test']);
    await startService();
    const id = await queueMessage(t.store, { to: ['ida@brokentls.test'] });
    service!.notify();
    const job = await waitFor(() => jobsOf(t.store, id).find((j) => j.attempts === 1), { what: 'the first attempt' });
    expect(job).toMatchObject({ state: 'done', history: [{ outcome: 'delivered', mx: 'broken-tls.example.test', tls: false }] });
    expect(job.history[0].tlsDetail?.reason).toMatch(/^TLS handshake failed: /);
    expect(broken.received).toMatchObject([{ to: ['ida@brokentls.test'], secure: false }]);
  });
});
