/**
 * Opportunistic TLS that never strands mail (issue 21, defect 1; RFC 7435): an MX that answers
 * STARTTLS with 454 gets the message in plain text over a new connection, an MX that speaks only
 * TLS 1.0 gets it over TLS 1.0, and each attempt records whether TLS was used and why not.
 * Real DeliveryService, test DNS server, smtp-server MX hosts on 127.0.41.x.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { destinationKey } from '../../src/delivery/connection-cache.js';
import type { DeliveryService } from '../../src/delivery/dispatcher.js';
import type { DnsResolver } from '../../src/dns/resolver.js';
import type { DeliveryJob } from '../../src/domain/types.js';
import { routeTo } from '../support/delivery-rig.js';
import { openTestStore, queueMessage, testDeliveryService, type TestStore } from '../support/delivery.js';
import { startDnsServer, testResolver, type TestDns } from '../support/dns-server.js';
import { startMxServer, type MxServer } from '../support/mx-server.js';
import { waitFor } from '../support/wait.js';

let dns: TestDns;
let resolver: DnsResolver;
let refusing: MxServer;
let tls10: MxServer;
let t: TestStore;
let service: DeliveryService | undefined;

beforeAll(async () => {
  dns = await startDnsServer();
  resolver = testResolver(dns);
  refusing = await startMxServer({ address: '127.0.41.2', starttlsReply: { code: 454, message: '4.7.0 TLS not available due to local problem' } });
  // OpenSSL 3 speaks TLS 1.0 only at security level 0, on both ends.
  tls10 = await startMxServer({ address: '127.0.41.3', port: refusing.port, tlsOptions: { minVersion: 'TLSv1', maxVersion: 'TLSv1', ciphers: 'DEFAULT:@SECLEVEL=0' } });
  routeTo(dns, 'refusing-mail.net', '127.0.41.2');
  routeTo(dns, 'old-tls-mail.net', '127.0.41.3');
});

afterAll(async () => {
  resolver.stop();
  await Promise.all([refusing.close(), tls10.close(), dns.close()]);
});

afterEach(async () => {
  await service?.stop();
  service = undefined;
  await t?.close();
});

async function startService(): Promise<void> {
  t = await openTestStore();
  service = testDeliveryService(t.store, resolver, { 'delivery.port': refusing.port });
  await service.start();
}

/** Queues one message and waits for its first attempt's record. */
async function firstAttempt(to: string): Promise<DeliveryJob> {
  const id = await queueMessage(t.store, { to: [to] });
  service!.notify();
  const job = await waitFor(async () => (await t.store.queue.jobsOfMessage(id)).find((j) => j.attempts >= 1), { what: `the first attempt to ${to}` });
  expect((await t.store.messages.get(id))?.status).toBe('sent');
  return job;
}

describe('opportunistic TLS falls back instead of stranding mail', () => {
  it('delivers in plain text to an MX that answers STARTTLS with 454, and records why', async () => {
    await startService();
    const before = refusing.received.length;
    const job = await firstAttempt('ann@refusing-mail.net');
    expect(job.history).toHaveLength(1);
    expect(job.history[0]).toMatchObject({ outcome: 'delivered', mx: 'mx.refusing-mail.net', tls: false });
    expect(job.history[0].tlsDetail?.reason).toMatch(/^STARTTLS refused: 454 4\.7\.0 TLS not available/);
    expect(refusing.received.slice(before)).toMatchObject([{ to: ['ann@refusing-mail.net'], secure: false }]);
  });

  it('reuses the plain-text fallback connection only as such, under its own key', async () => {
    await startService();
    await firstAttempt('bob@refusing-mail.net');
    const connections = refusing.connections;
    const job = await firstAttempt('cid@refusing-mail.net');
    // The kept fallback connection carried the second message: no new STARTTLS attempt.
    expect(refusing.connections).toBe(connections);
    expect(job.history[0]).toMatchObject({ outcome: 'delivered', tls: false });
    expect(job.history[0].tlsDetail?.reason).toMatch(/^STARTTLS refused: 454/);
    const d = { address: '127.0.41.2', port: 25 };
    expect(destinationKey({ ...d, tls: 'none' })).not.toBe(destinationKey({ ...d, tls: 'may' }));
    expect(destinationKey({ ...d, tls: 'verify', verifiedHost: 'a-mail.net' })).not.toBe(destinationKey({ ...d, tls: 'verify', verifiedHost: 'b-mail.net' }));
  });

  it('negotiates TLS 1.0 with an MX that speaks nothing newer, and records the protocol', async () => {
    await startService();
    const before = tls10.received.length;
    const job = await firstAttempt('dan@old-tls-mail.net');
    expect(job.history).toHaveLength(1);
    expect(job.history[0]).toMatchObject({ outcome: 'delivered', mx: 'mx.old-tls-mail.net', tls: true, tlsDetail: { protocol: 'TLSv1', verified: false } });
    expect(job.history[0].tlsDetail?.cipher).toBeTruthy();
    expect(tls10.received.slice(before)).toMatchObject([{ to: ['dan@old-tls-mail.net'], secure: true }]);
  });
});
