/**
 * Replies about our own message, not about the recipient, from real SMTP servers on 127.0.30.x:
 * a strict MX's "500 Line too long" and size refusals are soft bounces. The message failed, the
 * address is fine, so it is never suppressed (a hard bounce would suppress it for good).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeliveryService } from '../../src/delivery/dispatcher.js';
import type { DnsResolver } from '../../src/dns/resolver.js';
import { routeTo } from '../support/delivery-rig.js';
import { CHANNEL, openTestStore, queueMessage, rawMessage, testDeliveryService, type TestStore } from '../support/delivery.js';
import { startDnsServer, testResolver, type TestDns } from '../support/dns-server.js';
import { startMxServer, type MxServer } from '../support/mx-server.js';
import { waitFor } from '../support/wait.js';

let dns: TestDns;
let resolver: DnsResolver;
let mx: MxServer;
let t: TestStore;
let service: DeliveryService;

beforeAll(async () => {
  dns = await startDnsServer();
  resolver = testResolver(dns);
  mx = await startMxServer({ address: '127.0.30.2', maxLineLength: 998 });
  routeTo(dns, 'strict-mail.net', '127.0.30.2');
  t = await openTestStore();
  service = testDeliveryService(t.store, resolver, { 'delivery.port': mx.port });
  await service.start();
});

afterAll(async () => {
  await service?.stop();
  await t?.close();
  resolver.stop();
  await Promise.all([mx.close(), dns.close()]);
});

async function bounceOf(to: string, body?: Buffer) {
  const id = await queueMessage(t.store, { to: [to], body: body ?? rawMessage('news@sender.test', [to]) });
  service.notify();
  await waitFor(async () => (await t.store.messages.get(id))?.status === 'sent', { what: `message ${id} to be done` });
  return (await t.store.events.ofMessage(id)).find((e) => e.eventType === 'bounced' || e.eventType === 'delivered');
}

describe('replies about our own message', () => {
  it('soft-bounces "500 Line too long" from a strict MX and does not suppress the recipient', async () => {
    const to = 'reader@strict-mail.net';
    const body = Buffer.concat([rawMessage('news@sender.test', [to]), Buffer.from(`${'x'.repeat(1500)}\r\n`)]);
    const e = await bounceOf(to, body);
    expect(e).toMatchObject({ eventType: 'bounced', details: { bounceType: 'soft', smtpCode: 500 } });
    expect(await t.store.suppressions.is(CHANNEL, 'transactional', to)).toBe(false);
  });

  it('soft-bounces a size refusal without an enhanced code and does not suppress the recipient', async () => {
    const to = 'big@strict-mail.net';
    mx.scriptData({ code: 552, message: 'Error: message exceeds fixed maximum message size 1048576' });
    const e = await bounceOf(to);
    expect(e).toMatchObject({ eventType: 'bounced', details: { bounceType: 'soft', category: 'message_too_large', smtpCode: 552 } });
    expect(await t.store.suppressions.is(CHANNEL, 'transactional', to)).toBe(false);
  });
});
