/**
 * Delivery end to end: messages committed as the send path commits them, a real
 * DeliveryService, real DNS answers from the test DNS server and real SMTP servers as MX hosts
 * on loopback addresses (127.0.10.x). Never real DNS or a real MX.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { DeliveryService } from '../../src/delivery/dispatcher.js';
import type { DnsResolver } from '../../src/dns/resolver.js';
import type { EventRecord } from '../../src/domain/types.js';
import { verpLocalPart } from '../../src/domain/verp.js';
import { CHANNEL, openTestStore, queueMessage, rawMessage, testDeliveryService, type TestStore } from '../support/delivery.js';
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
  dns.set('mx1.northwind-mail.net', 'A', ['127.0.10.2']);
  dns.set('mx2.northwind-mail.net', 'A', ['127.0.10.3']);
  dns.set('plain.northwind-mail.net', 'A', ['127.0.10.4']);
  dns.set('dead.northwind-mail.net', 'A', [DEAD]);
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
  service = testDeliveryService(t.store, resolver, { 'delivery.port': mx1.port, ...overrides });
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
  await waitFor(async () => (await t.store.messages.get(id))?.status === 'sent', { what: `message ${id} to be sent` });
  return (await t.store.events.ofMessage(id)).filter((e) => e.eventType === 'delivered' || e.eventType === 'bounced');
}

describe('delivery to MX hosts', () => {
  it('delivers a message to the MX over STARTTLS with the signed body, return path and EHLO name', async () => {
    dns.set('northwind-mail.net', 'MX', ['10 mx1.northwind-mail.net']);
    await startService();
    const before = mx1.received.length;
    const connections = mx1.connections;
    const id = await send(['ann@northwind-mail.net', 'bob@northwind-mail.net']);
    const events = await settled(id);
    expect(events.map((e) => [e.eventType, e.recipients])).toEqual([['delivered', ['ann@northwind-mail.net', 'bob@northwind-mail.net']]]);
    expect(events[0].details).toMatchObject({ mx: 'mx1.northwind-mail.net', tls: true, smtpCode: 250, attempt: 1 });
    // One transaction per recipient, each with that recipient's bounce address (return-path.ts),
    // over one connection: the second reuses the first's session (RSET).
    const got = mx1.received.slice(before);
    const secret = await t.store.meta.trackingSecret();
    expect(got.map((r) => [r.from, r.to])).toEqual([
      [`${verpLocalPart(secret, id, 'ann@northwind-mail.net')}@bounces.sender.test`, ['ann@northwind-mail.net']],
      [`${verpLocalPart(secret, id, 'bob@northwind-mail.net')}@bounces.sender.test`, ['bob@northwind-mail.net']],
    ]);
    expect(mx1.connections).toBe(connections + 1);
    expect(got[0]).toMatchObject({ secure: true, heloName: 'postrider.test' });
    expect(got[0].raw.toString()).toContain('.a line that starts with a dot');
    expect(got[1].raw.toString()).toContain('Subject: Hello');
    expect((await t.store.queue.jobsOfMessage(id))[0]).toMatchObject({ state: 'done', attempts: 1 });
  });

  it('falls back to the next MX when the first one refuses the connection', async () => {
    dns.set('fallback-mail.net', 'MX', ['10 dead.northwind-mail.net', '20 mx2.northwind-mail.net']);
    await startService();
    const id = await send(['cat@fallback-mail.net']);
    const [event] = await settled(id);
    expect(event).toMatchObject({ eventType: 'delivered', details: { mx: 'mx2.northwind-mail.net', tls: true } });
  });

  it('delivers to the accepted recipients and hard-bounces and suppresses the rejected one', async () => {
    dns.set('partial-mail.net', 'MX', ['10 mx1.northwind-mail.net']);
    mx1.scriptRcpt('gone@partial-mail.net', { code: 550, message: '5.1.1 <gone@partial-mail.net>: Recipient address rejected: User unknown' });
    await startService();
    const id = await send(['here@partial-mail.net', 'gone@partial-mail.net']);
    const events = await settled(id);
    expect(events.map((e) => [e.eventType, e.recipients, e.details.bounceType])).toEqual([
      ['delivered', ['here@partial-mail.net'], undefined],
      ['bounced', ['gone@partial-mail.net'], 'hard'],
    ]);
    expect(events[1].details).toMatchObject({ smtpCode: 550, enhancedCode: '5.1.1', category: 'unknown_user', mx: 'mx1.northwind-mail.net' });
    expect(await t.store.suppressions.is(CHANNEL, 'transactional', 'gone@partial-mail.net')).toBe(true);
  });

  it('delivers through the implicit MX: the domain A record when there is no MX', async () => {
    dns.set('implicit-mail.net', 'A', ['127.0.10.3']);
    await startService();
    const id = await send(['dan@implicit-mail.net']);
    const [event] = await settled(id);
    expect(event).toMatchObject({ eventType: 'delivered', details: { mx: 'implicit-mail.net' } });
  });

  it('bounces a domain with a null MX without connecting anywhere (RFC 7505)', async () => {
    dns.set('nomail-mail.net', 'MX', ['0 .']);
    await startService();
    const id = await send(['eve@nomail-mail.net']);
    const [event] = await settled(id);
    expect(event).toMatchObject({ eventType: 'bounced', details: { bounceType: 'hard', category: 'dns', smtpCode: 556, enhancedCode: '5.1.10' } });
  });

  it('bounces a recipient domain that does not exist', async () => {
    await startService();
    const id = await send(['fay@does-not-exist-mail.net']);
    const [event] = await settled(id);
    expect(event).toMatchObject({ eventType: 'bounced', details: { bounceType: 'hard', enhancedCode: '5.1.2' } });
  });

  it('refuses to connect to a loopback MX when private addresses are not allowed', async () => {
    dns.set('internal-mail.net', 'MX', ['10 mx1.northwind-mail.net']);
    await startService({ 'delivery.allowPrivate': false });
    const connections = mx1.connections;
    const id = await send(['gus@internal-mail.net']);
    const [event] = await settled(id);
    expect(event).toMatchObject({ eventType: 'bounced', details: { bounceType: 'soft', category: 'dns', enhancedCode: '5.4.4' } });
    expect(String(event.details.response)).toContain('127.0.10.2');
    expect(mx1.connections).toBe(connections);
  });

  it('sends in plain text to a server that does not offer STARTTLS and records tls false', async () => {
    dns.set('plain-mail.net', 'MX', ['10 plain.northwind-mail.net']);
    await startService();
    const id = await send(['hal@plain-mail.net']);
    const [event] = await settled(id);
    expect(event).toMatchObject({ eventType: 'delivered', details: { mx: 'plain.northwind-mail.net', tls: false } });
    expect(plain.received.at(-1)?.secure).toBe(false);
  });
});

describe('a failed STARTTLS handshake', () => {
  let broken: MxServer;

  beforeAll(async () => {
    // Offers STARTTLS but only anonymous ciphers, which no client offers: every handshake fails.
    broken = await startMxServer({ address: '127.0.10.5', port: mx1.port, tlsOptions: { maxVersion: 'TLSv1.2', ciphers: 'aNULL:@SECLEVEL=0' } });
    dns.set('broken-tls.northwind-mail.net', 'A', ['127.0.10.5']);
  });

  afterAll(async () => {
    await broken.close();
  });

  it('delivers in plain text over a new connection (opportunistic TLS, RFC 7435) and records why', async () => {
    dns.set('brokentls-mail.net', 'MX', ['10 broken-tls.northwind-mail.net']);
    await startService();
    const id = await queueMessage(t.store, { to: ['ida@brokentls-mail.net'] });
    service!.notify();
    const job = await waitFor(async () => (await t.store.queue.jobsOfMessage(id)).find((j) => j.attempts === 1), { what: 'the first attempt' });
    expect(job).toMatchObject({ state: 'done', history: [{ outcome: 'delivered', mx: 'broken-tls.northwind-mail.net', tls: false }] });
    expect(job.history[0].tlsDetail?.reason).toMatch(/^TLS handshake failed: /);
    expect(broken.received).toMatchObject([{ to: ['ida@brokentls-mail.net'], secure: false }]);
  });
});
