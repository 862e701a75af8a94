/**
 * A recipient domain that does not exist (the test DNS server answers NXDOMAIN): the message
 * bounces hard with the DNS category (not unknown_user, although the description says "does
 * not exist"), and the recipient is suppressed only once the domain has failed this way
 * DNS_FAILURE_SUPPRESS_AFTER times within DNS_FAILURE_WINDOW_MS (store/dns-failures.ts).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { DeliveryService } from '../../src/delivery/dispatcher.js';
import type { DnsResolver } from '../../src/dns/resolver.js';
import type { EventRecord } from '../../src/domain/types.js';
import { DNS_FAILURE_SUPPRESS_AFTER, DNS_FAILURE_WINDOW_MS } from '../../src/domain/dns-failure-rule.js';
import { ACCOUNT, CHANNEL, openTestStore, queueMessage, testDeliveryService, type TestStore } from '../support/delivery.js';
import { startDnsServer, testResolver, type TestDns } from '../support/dns-server.js';
import { waitFor } from '../support/wait.js';

let dns: TestDns;
let resolver: DnsResolver;
let t: TestStore;
let service: DeliveryService | undefined;

beforeAll(async () => {
  dns = await startDnsServer();
  resolver = testResolver(dns);
});

afterAll(async () => {
  resolver.stop();
  await dns.close();
});

afterEach(async () => {
  await service?.stop();
  service = undefined;
  await t?.close();
});

async function startService(): Promise<void> {
  t = await openTestStore();
  service = testDeliveryService(t.store, resolver);
  await service.start();
}

/** Sends one message and waits for its bounced event. */
async function bounceOf(to: string): Promise<EventRecord> {
  const id = await queueMessage(t.store, { to: [to] });
  service!.notify();
  await waitFor(async () => (await t.store.messages.get(id))?.status === 'sent', { what: `message ${id} to be sent` });
  const bounced = (await t.store.events.ofMessage(id)).filter((e) => e.eventType === 'bounced');
  expect(bounced).toHaveLength(1);
  return bounced[0];
}

describe('delivery to a domain that does not exist', () => {
  it('bounces hard with category dns and does not suppress after one NXDOMAIN', async () => {
    await startService();
    const event = await bounceOf('fay@nx-once-mail.net');
    expect(event.details).toMatchObject({ bounceType: 'hard', category: 'dns', enhancedCode: '5.1.2' });
    expect(String(event.details.response)).toContain('NXDOMAIN');
    expect(await t.store.suppressions.is(CHANNEL, 'transactional', 'fay@nx-once-mail.net')).toBe(false);
    expect(await t.store.dnsFailures.recent(ACCOUNT, 'nx-once-mail.net')).toHaveLength(1);
  });

  it(`suppresses the recipient on the domain's ${DNS_FAILURE_SUPPRESS_AFTER}rd NXDOMAIN`, async () => {
    await startService();
    for (let i = 1; i < DNS_FAILURE_SUPPRESS_AFTER; i++) {
      expect((await bounceOf('gus@nx-three-mail.net')).details.category).toBe('dns');
      expect((await t.store.suppressions.is(CHANNEL, 'transactional', 'gus@nx-three-mail.net')), `after failure ${i}`).toBe(false);
    }
    expect((await bounceOf('gus@nx-three-mail.net')).details).toMatchObject({ bounceType: 'hard', category: 'dns' });
    expect(await t.store.suppressions.is(CHANNEL, 'transactional', 'gus@nx-three-mail.net')).toBe(true);
  });

  it('counts only the failures within the window', async () => {
    t = await openTestStore();
    const now = Date.parse('2025-01-10T00:00:00Z');
    const count = (atMs: number) => t.store.dnsFailures.countFailure({ accountId: ACCOUNT, domain: 'Gone-mail.net', atMs });
    expect(await count(now - DNS_FAILURE_WINDOW_MS - 1)).toBe(false);
    expect(await count(now - 1000)).toBe(false);
    expect(await count(now)).toBe(false); // the first one fell out of the window
    expect(await count(now + 1000)).toBe(true);
    expect(await t.store.dnsFailures.recent(ACCOUNT, 'gone-mail.net')).toEqual([now - 1000, now, now + 1000]);
  });
});
