/**
 * Scheduled sends (issue 34) in the delivery queue: a message committed now with a later
 * scheduledAt is not attempted before its time and is delivered at it, across a restart too.
 * The dispatcher runs on a fake clock; the MX is a real SMTP server on 127.0.21.x.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { AttemptFn } from '../../src/delivery/attempt.js';
import { DeliveryService, type DeliveryServiceOptions } from '../../src/delivery/dispatcher.js';
import type { DnsResolver } from '../../src/dns/resolver.js';
import { createLogger } from '../../src/log/logger.js';
import { routeTo } from '../support/delivery-rig.js';
import { allSent, deliveryConfig, openTestStore, queueMessage, silentLogger, testDeliveryService, type TestStore } from '../support/delivery.js';
import { startDnsServer, testResolver, type TestDns } from '../support/dns-server.js';
import { FakeClock } from '../support/fake-clock.js';
import { startMxServer, type MxServer } from '../support/mx-server.js';
import { waitFor } from '../support/wait.js';
import { maxInWindow } from '../support/windows.js';

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

  it('sends a burst of messages due at the same time under delivery.rate, none before its time (60 at 09:00, 10/s)', async () => {
    t = await openTestStore();
    clock = new FakeClock();
    const at = clock.now() + HOUR;
    const starts: number[] = [];
    const attempt: AttemptFn = async ({ job }) => {
      starts.push(clock.wall());
      return { recipients: job.recipients.map((recipient) => ({ recipient, outcome: 'delivered', category: 'delivered', phase: 'message', smtpCode: 250, response: '250 OK' })), tls: true, response: '250 OK' };
    };
    const ids: string[] = [];
    for (let i = 0; i < 60; i++) ids.push(await queueMessage(t.store, { to: [`r${i}@d${i}-mail.net`], now: new Date(clock.now()), scheduledAt: new Date(at).toISOString() }));
    // When each attempt started, as the rate limiter counts it: an attempt loads its message in
    // the same turn as it takes its start (dispatcher.ts launch, runAttempt). The attempt function
    // runs only after that read, and on PostgreSQL under load the loop below may move the fake
    // clock while the read is under way, so its own reading of the clock can bunch starts taken
    // a slot apart (CI: 11 in one second).
    const launched: number[] = [];
    const withBody = t.store.messages.withBody.bind(t.store.messages);
    vi.spyOn(t.store.messages, 'withBody').mockImplementation((id) => {
      launched.push(clock.wall());
      return withBody(id);
    });
    const s = new DeliveryService({ store: t.store, config: deliveryConfig({ 'delivery.rate': 10 }), resolver, logger: silentLogger(), clock, attempt, idleCheckMs: 24 * 10 * HOUR });
    services.push(s);
    await s.start();
    await waitFor(() => clock.nextTimerAt() === at, { what: 'the timer at the scheduled time' });
    expect(starts).toEqual([]);
    clock.advance(HOUR);
    // Fake time moves to each timer the dispatcher sets (its rate limiter's next slot), once it waits on one.
    for (;;) {
      const next = await waitFor(
        async () => {
          if (await allSent(t.store, ids)) return 'done';
          const n = clock.nextTimerAt();
          return n !== undefined && n - clock.now() < HOUR ? n : undefined;
        },
        { what: 'the dispatcher to wait for its next slot' },
      );
      if (next === 'done') break;
      clock.advance(Math.max(1, next - clock.now()));
    }
    expect(await allSent(t.store, ids)).toBe(true);
    expect(starts).toHaveLength(60);
    expect(launched).toHaveLength(60);
    expect(Math.min(...starts)).toBeGreaterThanOrEqual(at);
    expect(Math.min(...launched)).toBeGreaterThanOrEqual(at);
    const busiest = maxInWindow([...launched].sort((a, b) => a - b), 1000);
    // Measured, for the record: how long the burst took on the fake clock and its busiest second.
    console.info(`burst of 60 due at once, rate 10/s: last start ${Math.max(...starts) - at} ms after the time, busiest 1-second window ${busiest}`);
    expect(busiest).toBeLessThanOrEqual(10);
    // 60 at 10/s take at least 5 s after the first slot, and the limiter does not dawdle (6.51 s measured).
    expect(Math.max(...launched) - at).toBeGreaterThanOrEqual(5000);
    expect(Math.max(...starts) - at).toBeLessThan(8000);
  });
});
