/**
 * SMTPUTF8 (RFC 6531) and 8BITMIME (RFC 6152) on delivery: a message that needs one goes with
 * its MAIL FROM parameter to a receiver that offers it, and is not sent at all to one that does
 * not, but bounced at once (5.6.7, 5.6.3: about the message, so nothing is suppressed and nothing
 * retried). Real smtp-server MX hosts on loopback, one offering both extensions and two leaving
 * one out of EHLO, and the test DNS server.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { DeliveryService } from '../../src/delivery/dispatcher.js';
import type { DnsResolver } from '../../src/dns/resolver.js';
import type { EventRecord } from '../../src/domain/types.js';
import { CHANNEL, openTestStore, queueMessage, testDeliveryService, type TestStore } from '../support/delivery.js';
import { startDnsServer, testResolver, type TestDns } from '../support/dns-server.js';
import { startMxServers, type MxServer } from '../support/mx-server.js';
import { waitFor } from '../support/wait.js';

let dns: TestDns;
let resolver: DnsResolver;
let full: MxServer;
let no8bit: MxServer;
let noUtf8: MxServer;
let t: TestStore;
let service: DeliveryService | undefined;

beforeAll(async () => {
  dns = await startDnsServer();
  resolver = testResolver(dns);
  [full] = await startMxServers(['127.0.14.2']);
  [no8bit] = await startMxServers(['127.0.14.3'], { hide: ['8BITMIME'] });
  [noUtf8] = await startMxServers(['127.0.14.4'], { hide: ['SMTPUTF8'] });
  dns.set('mx.full-ext.net', 'A', ['127.0.14.2']);
  dns.set('mx.no8bit-ext.net', 'A', ['127.0.14.3']);
  dns.set('mx.noutf8-ext.net', 'A', ['127.0.14.4']);
  dns.set('full-ext.net', 'MX', ['10 mx.full-ext.net']);
  dns.set('no8bit-ext.net', 'MX', ['10 mx.no8bit-ext.net']);
  dns.set('noutf8-ext.net', 'MX', ['10 mx.noutf8-ext.net']);
});

afterAll(async () => {
  resolver.stop();
  await Promise.all([full.close(), no8bit.close(), noUtf8.close(), dns.close()]);
});

afterEach(async () => {
  await service?.stop();
  service = undefined;
  await t?.close();
});

/** A stored message with these header lines and body text (CRLF line ends, as stored). */
function message(to: string, o: { subject?: string; body?: string }): Buffer {
  const head = ['From: <news@sender.test>', `To: <${to}>`, `Subject: ${o.subject ?? 'Hello'}`, 'MIME-Version: 1.0', 'Content-Type: text/plain; charset=utf-8', 'Content-Transfer-Encoding: 8bit'];
  return Buffer.from(`${head.join('\r\n')}\r\n\r\n${o.body ?? 'Hello.'}\r\n`);
}

/** Sends it to `to` through an MX on its own port; the message's delivery events once it is finished. */
async function deliver(mx: MxServer, to: string, o: { subject?: string; body?: string } = {}): Promise<{ id: string; events: EventRecord[] }> {
  t = await openTestStore();
  service = testDeliveryService(t.store, resolver, { 'delivery.port': mx.port });
  await service.start();
  const id = await queueMessage(t.store, { to: [to], body: message(to, o) });
  service.notify();
  await waitFor(async () => (await t.store.messages.get(id))?.status === 'sent', { what: `message ${id} to be finished` });
  const events = (await t.store.events.ofMessage(id)).filter((e) => e.eventType === 'delivered' || e.eventType === 'bounced');
  return { id, events };
}

describe('MAIL FROM parameters when the receiver offers the extensions', () => {
  it('gives SMTPUTF8 and BODY=8BITMIME for a UTF-8 header field (RFC 6531 3.4), BODY=8BITMIME alone for an 8-bit body', async () => {
    const before = full.mailFromArgs.length;
    const header = await deliver(full, 'ann@full-ext.net', { subject: 'Grüße' });
    expect(header.events).toMatchObject([{ eventType: 'delivered' }]);
    await service!.stop();
    await t.close();
    const body = await deliver(full, 'bob@full-ext.net', { body: 'Café au lait.' });
    expect(body.events).toMatchObject([{ eventType: 'delivered' }]);
    await service!.stop();
    await t.close();
    const ascii = await deliver(full, 'cat@full-ext.net');
    expect(ascii.events).toMatchObject([{ eventType: 'delivered' }]);
    const [h, b, a] = full.mailFromArgs.slice(before);
    expect(h).toMatchObject({ BODY: '8BITMIME', SMTPUTF8: true });
    expect(b).toMatchObject({ BODY: '8BITMIME' });
    expect(b).not.toHaveProperty('SMTPUTF8');
    expect(a).not.toHaveProperty('BODY');
    expect(a).not.toHaveProperty('SMTPUTF8');
  });

  it('gives SMTPUTF8 for a non-ASCII recipient address', async () => {
    const before = full.mailFromArgs.length;
    const { events } = await deliver(full, 'josé@full-ext.net');
    expect(events).toMatchObject([{ eventType: 'delivered' }]);
    expect(full.mailFromArgs.slice(before)).toMatchObject([{ SMTPUTF8: true }]);
  });
});

describe('a receiver without the extension the message needs', () => {
  it('does not get a message to a non-ASCII address without SMTPUTF8: a permanent 5.6.7, not retried, not suppressed', async () => {
    const mailFroms = noUtf8.mailFroms.length;
    const { id, events } = await deliver(noUtf8, 'josé@noutf8-ext.net');
    expect(events).toMatchObject([{ eventType: 'bounced', recipients: ['josé@noutf8-ext.net'], details: { bounceType: 'soft', smtpCode: 554, enhancedCode: '5.6.7', attempt: 1 } }]);
    expect(events[0].details.response).toContain('does not offer SMTPUTF8');
    expect(noUtf8.mailFroms.length).toBe(mailFroms);
    expect((await t.store.queue.jobsOfMessage(id))[0]).toMatchObject({ state: 'done', attempts: 1 });
    expect(await t.store.suppressions.is(CHANNEL, 'transactional', 'josé@noutf8-ext.net')).toBe(false);
  });

  it('does not get a message with a UTF-8 header field without SMTPUTF8 (RFC 6532): 5.6.7', async () => {
    const mailFroms = noUtf8.mailFroms.length;
    const { events } = await deliver(noUtf8, 'ann@noutf8-ext.net', { subject: 'Grüße' });
    expect(events).toMatchObject([{ eventType: 'bounced', details: { bounceType: 'soft', enhancedCode: '5.6.7', attempt: 1 } }]);
    expect(noUtf8.mailFroms.length).toBe(mailFroms);
  });

  it('does not get an 8-bit body without 8BITMIME (RFC 6152 3): 5.6.3, since converting it would break the DKIM signature', async () => {
    const mailFroms = no8bit.mailFroms.length;
    const { id, events } = await deliver(no8bit, 'bob@no8bit-ext.net', { body: 'Café au lait.' });
    expect(events).toMatchObject([{ eventType: 'bounced', details: { bounceType: 'soft', smtpCode: 554, enhancedCode: '5.6.3', attempt: 1 } }]);
    expect(events[0].details.response).toContain('does not offer 8BITMIME');
    expect(no8bit.mailFroms.length).toBe(mailFroms);
    expect((await t.store.queue.jobsOfMessage(id))[0]).toMatchObject({ state: 'done', attempts: 1 });
    expect(await t.store.suppressions.is(CHANNEL, 'transactional', 'bob@no8bit-ext.net')).toBe(false);
  });

  it('still gets an all-ASCII message', async () => {
    const { events } = await deliver(no8bit, 'cat@no8bit-ext.net');
    expect(events).toMatchObject([{ eventType: 'delivered' }]);
  });
});
