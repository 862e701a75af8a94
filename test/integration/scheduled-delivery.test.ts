/**
 * Scheduled sends (issue 34) in the delivery queue: a message committed now with a later
 * scheduledAt is not attempted before its time and is delivered at it, across a restart too.
 * The dispatcher runs on a fake clock; the MX is a real SMTP server on 127.0.21.x.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { DeliveryService, DeliveryServiceOptions } from '../../src/delivery/dispatcher.js';
import type { DnsResolver } from '../../src/dns/resolver.js';
import { createLogger } from '../../src/log/logger.js';
import { routeTo } from '../support/delivery-rig.js';
import { openTestStore, queueMessage, testDeliveryService, type TestStore } from '../support/delivery.js';
import { startDnsServer, testResolver, type TestDns } from '../support/dns-server.js';
import { FakeClock } from '../support/fake-clock.js';
import { startMxServer, type MxServer } from '../support/mx-server.js';
import { waitFor } from '../support/wait.js';

const HOUR = 3_600_000;

let dns: TestDns;
let resolver: DnsResolver;
let mx: MxServer;
let t: TestStore;
let clock: FakeClock;
const services: DeliveryService[] = [];

beforeAll(async () => {
  dns = await startDnsServer();
  resolver = testResolver(dns);
  mx = await startMxServer({ address: '127.0.21.2' });
  routeTo(dns, 'later-mail.net', '127.0.21.2');
});

afterAll(async () => {
  resolver.stop();
  await Promise.all([mx.close(), dns.close()]);
});

afterEach(async () => {
  for (const s of services.splice(0)) await s.stop();
  await t?.close();
});

async function startService(extra: Partial<DeliveryServiceOptions> = {}): Promise<DeliveryService> {
  const s = testDeliveryService(t.store, resolver, { 'delivery.port': mx.port }, { clock, idleCheckMs: 24 * 10 * HOUR, ...extra });
  services.push(s);
  await s.start();
  return s;
}

function receivedBy(rcpt: string): number {
  return mx.received.filter((r) => r.to.includes(rcpt)).length;
}

describe('scheduled delivery', () => {
  it('attempts a scheduled message at its time, not before', async () => {
    t = await openTestStore();
    clock = new FakeClock();
    const s = await startService();
    const at = clock.now() + 2 * HOUR;
    const id = await queueMessage(t.store, { to: ['ann@later-mail.net'], now: new Date(clock.now()), scheduledAt: new Date(at).toISOString() });
    s.notify();
    expect((await t.store.queue.jobsOfMessage(id))[0]).toMatchObject({ state: 'queued', attempts: 0, dueAt: new Date(at).toISOString() });
    // The dispatcher sleeps until the scheduled time: nothing is attempted meanwhile.
    await waitFor(() => clock.nextTimerAt() === at, { what: 'the timer at the scheduled time' });
    clock.advance(2 * HOUR - 1);
    expect((await t.store.queue.jobsOfMessage(id))[0]).toMatchObject({ state: 'queued', attempts: 0 });
    clock.advance(1);
    await waitFor(async () => (await t.store.messages.get(id))?.status === 'sent', { what: 'the scheduled message to be sent' });
    expect(receivedBy('ann@later-mail.net')).toBe(1);
    const accepted = (await t.store.events.ofMessage(id)).find((e) => e.eventType === 'accepted');
    expect(accepted?.details).toEqual({ scheduledAt: new Date(at).toISOString() });
  });

  it('keeps a scheduled message across a restart and sends it at its time', async () => {
    t = await openTestStore();
    clock = new FakeClock();
    const at = clock.now() + HOUR;
    const id = await queueMessage(t.store, { to: ['bob@later-mail.net'], now: new Date(clock.now()), scheduledAt: new Date(at).toISOString() });
    await t.reopen();
    await startService();
    await waitFor(() => clock.nextTimerAt() === at, { what: 'the timer at the scheduled time' });
    expect(receivedBy('bob@later-mail.net')).toBe(0);
    clock.advance(HOUR);
    await waitFor(async () => (await t.store.messages.get(id))?.status === 'sent', { what: 'the scheduled message to be sent' });
    expect(receivedBy('bob@later-mail.net')).toBe(1);
  });

  it('sends at start, late, what fell due while the daemon was down, and logs one line with how late', async () => {
    t = await openTestStore();
    clock = new FakeClock();
    const at = clock.now() + HOUR;
    const id = await queueMessage(t.store, { to: ['cy@later-mail.net'], now: new Date(clock.now()), scheduledAt: new Date(at).toISOString() });
    // Down from before its time until two hours after it.
    clock.advance(3 * HOUR);
    const lines: Array<Record<string, unknown>> = [];
    const logger = createLogger({ level: 'info', destination: { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) } });
    await startService({ logger });
    const late = lines.filter((l) => String(l.msg).startsWith('delivery queue overdue at start'));
    expect(late).toEqual([expect.objectContaining({ level: 30, lateMs: 2 * HOUR, oldestDueAt: new Date(at).toISOString(), dueNow: 1 })]);
    await waitFor(async () => (await t.store.messages.get(id))?.status === 'sent', { what: 'the late message to be sent' });
    expect(receivedBy('cy@later-mail.net')).toBe(1);
  });
});
