/**
 * Retries, bounces, expiry and crash safety, with the dispatcher on a fake clock (time only
 * moves when the test says so) and real SMTP servers on 127.0.20.x.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { DeliveryService, DeliveryServiceOptions } from '../../src/delivery/dispatcher.js';
import type { DnsResolver } from '../../src/dns/resolver.js';
import { createLogger } from '../../src/log/logger.js';
import type { EventRecord } from '../../src/domain/types.js';
import { routeTo } from '../support/delivery-rig.js';
import { CHANNEL, openTestStore, queueMessage, testDeliveryService, type TestStore } from '../support/delivery.js';
import { startDnsServer, testResolver, type TestDns } from '../support/dns-server.js';
import { FakeClock } from '../support/fake-clock.js';
import { startMxServer, type MxServer } from '../support/mx-server.js';
import { waitFor } from '../support/wait.js';

const MINUTE = 60_000;

let dns: TestDns;
let resolver: DnsResolver;
let mx: MxServer;
let slow: MxServer;
let t: TestStore;
let clock: FakeClock;
const services: DeliveryService[] = [];

beforeAll(async () => {
  dns = await startDnsServer();
  resolver = testResolver(dns);
  mx = await startMxServer({ address: '127.0.20.2' });
  // Holds every DATA reply for 10 s: an attempt still running at shutdown.
  slow = await startMxServer({ address: '127.0.20.3', port: mx.port, dataDelayMs: 10_000 });
  routeTo(dns, 'retry-mail.net', '127.0.20.2');
});

afterAll(async () => {
  resolver.stop();
  await Promise.all([mx.close(), slow.close(), dns.close()]);
});

afterEach(async () => {
  for (const s of services.splice(0)) await s.stop();
  await t?.close();
});

function newService(overrides: Record<string, unknown> = {}, extra: Partial<DeliveryServiceOptions> = {}): DeliveryService {
  const s = testDeliveryService(t.store, resolver, { 'delivery.port': mx.port, 'delivery.retrySchedule': '5m,10m,30m,1h*', ...overrides }, {
    clock,
    // Only the due-time timer matters on the fake clock.
    idleCheckMs: 24 * 60 * MINUTE,
    ...extra,
  });
  services.push(s);
  return s;
}

async function setup(overrides: Record<string, unknown> = {}): Promise<DeliveryService> {
  t = await openTestStore();
  clock = new FakeClock();
  const s = newService(overrides);
  await s.start();
  return s;
}

async function send(s: DeliveryService, to: string[]): Promise<string> {
  const id = await queueMessage(t.store, { to, now: new Date(clock.now()) });
  s.notify();
  return id;
}

async function outcomes(id: string): Promise<EventRecord[]> {
  return (await t.store.events.ofMessage(id)).filter((e) => e.eventType === 'delivered' || e.eventType === 'bounced');
}

/** Waits for the job's attempt `n` to be recorded and the dispatcher to sleep until its retry. */
async function afterAttempt(id: string, n: number, nextDueMs?: number) {
  const job = await waitFor(async () => (await t.store.queue.jobsOfMessage(id)).find((j) => j.attempts === n), { what: `attempt ${n}` });
  if (nextDueMs !== undefined) await waitFor(() => clock.nextTimerAt() === nextDueMs, { what: 'the retry timer' });
  return job;
}

describe('log lines', () => {
  it('logs a delivered attempt at debug, one that did not deliver at info, and the attempts of the minute in one summary line', async () => {
    t = await openTestStore();
    clock = new FakeClock();
    const lines: Array<Record<string, unknown>> = [];
    const logger = createLogger({ level: 'info', destination: { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) } });
    const s = newService({}, { logger });
    await s.start();
    mx.scriptRcpt('later@retry-mail.net', { code: 451, message: '4.7.1 Greylisting in action, please come back later' });
    const ok = await send(s, ['ok@retry-mail.net']);
    const later = await send(s, ['later@retry-mail.net']);
    await waitFor(async () => (await t.store.messages.get(ok))?.status === 'sent', { what: 'the delivered message' });
    await afterAttempt(later, 1);
    await s.stop();
    const attempts = lines.filter((l) => l.event === 'delivery_attempt');
    expect(attempts.map((l) => [l.messageId, l.deferred])).toEqual([[later, 1]]);
    const summaries = lines.filter((l) => l.event === 'delivery_summary');
    expect(summaries).toEqual([expect.objectContaining({ attempts: 2, delivered: 1, deferred: 1, bounced: 0, expired: 0 })]);
  });
});

describe('retries on the schedule', () => {
  it('defers a 451 and delivers on the retry after the first backoff step', async () => {
    const s = await setup();
    mx.scriptRcpt('grey@retry-mail.net', { code: 451, message: '4.7.1 Greylisting in action, please come back later' });
    const start = clock.now();
    const id = await send(s, ['grey@retry-mail.net']);
    const job = await afterAttempt(id, 1, start + 5 * MINUTE);
    expect(job).toMatchObject({ state: 'queued', dueAt: new Date(start + 5 * MINUTE).toISOString() });
    expect(job.history[0]).toMatchObject({ outcome: 'deferred', smtpCode: 451, enhancedCode: '4.7.1' });
    expect(await outcomes(id)).toEqual([]);

    clock.advance(5 * MINUTE - 1);
    // Sentinel: a message to another domain, due now. The round that sends it leases every due
    // job, so a retry a millisecond early would be leased (or done) by the time it is sent.
    dns.set('early-mail.net', 'MX', ['10 mx.retry-mail.net']);
    const sentinel = await send(s, ['ann@early-mail.net']);
    await waitFor(async () => (await t.store.messages.get(sentinel))?.status === 'sent', { what: 'the sentinel message' });
    expect((await t.store.queue.jobsOfMessage(id))[0].attempts).toBe(1); // not a millisecond early
    expect((await t.store.queue.jobsOfMessage(id))[0].state).toBe('queued');

    clock.advance(1);
    await waitFor(async () => (await t.store.messages.get(id))?.status === 'sent', { what: 'the retry to deliver' });
    expect((await outcomes(id)).map((e) => [e.eventType, e.details.attempt])).toEqual([['delivered', 2]]);
  });

  it('bounces a 550 5.1.1 at once and suppresses the address for the channel', async () => {
    const s = await setup();
    mx.scriptRcpt('nobody@retry-mail.net', { code: 550, message: '5.1.1 <nobody@retry-mail.net>: Recipient address rejected: User unknown' });
    const id = await send(s, ['nobody@retry-mail.net']);
    await waitFor(async () => (await t.store.messages.get(id))?.status === 'sent', { what: 'the bounce' });
    expect(await outcomes(id)).toMatchObject([{ eventType: 'bounced', details: { bounceType: 'hard', smtpCode: 550, enhancedCode: '5.1.1', attempt: 1 } }]);
    expect(await t.store.suppressions.is(CHANNEL, 'transactional', 'nobody@retry-mail.net')).toBe(true);
  });

  it('soft-bounces a content rejection after DATA without suppressing the address', async () => {
    const s = await setup();
    mx.scriptData({ code: 554, message: '5.7.1 Message rejected as spam' });
    const id = await send(s, ['fine@retry-mail.net']);
    await waitFor(async () => (await t.store.messages.get(id))?.status === 'sent', { what: 'the bounce' });
    expect(await outcomes(id)).toMatchObject([{ eventType: 'bounced', details: { bounceType: 'soft', category: 'spam', smtpCode: 554 } }]);
    expect(await t.store.suppressions.is(CHANNEL, 'transactional', 'fine@retry-mail.net')).toBe(false);
  });

  it('gives up a message that is still deferred at its maximum age, with the last reply', async () => {
    const s = await setup({ 'delivery.maxAgeMs': 2 * MINUTE });
    mx.scriptRcpt('full@retry-mail.net', { code: 452, message: '4.2.2 Mailbox full' }, { code: 452, message: '4.2.2 Mailbox full, still' });
    const start = clock.now();
    const id = await send(s, ['full@retry-mail.net']);
    // The 5-minute step is cut to the expiry time: one last attempt at 2 minutes.
    await afterAttempt(id, 1, start + 2 * MINUTE);
    clock.advance(2 * MINUTE);
    await waitFor(async () => (await t.store.messages.get(id))?.status === 'sent', { what: 'the expiry' });
    expect(await outcomes(id)).toMatchObject([
      { eventType: 'bounced', recipients: ['full@retry-mail.net'], details: { reason: 'expired', bounceType: 'soft', category: 'mailbox_full', response: '452 4.2.2 Mailbox full, still', attempt: 2 } },
    ]);
    expect((await t.store.queue.jobsOfMessage(id))[0]).toMatchObject({ state: 'done', attempts: 2 });
  });

  it('counts the maximum age of a scheduled message from its scheduled time, not from its commit', async () => {
    const s = await setup({ 'delivery.maxAgeMs': 2 * MINUTE });
    mx.scriptRcpt('later@retry-mail.net', { code: 451, message: '4.7.1 Greylisting in action, please come back later' });
    const start = clock.now();
    const at = start + 10 * MINUTE;
    const id = await queueMessage(t.store, { to: ['later@retry-mail.net'], now: new Date(start), scheduledAt: new Date(at).toISOString() });
    s.notify();
    await waitFor(() => clock.nextTimerAt() === at, { what: 'the timer of the scheduled time' });
    clock.advance(10 * MINUTE);
    // Greylisted at its time: retried within its own 2 minutes, not given up as 10 minutes old.
    const job = await afterAttempt(id, 1);
    expect(await outcomes(id)).toEqual([]);
    expect(job).toMatchObject({ state: 'queued', dueAt: new Date(at + 2 * MINUTE).toISOString() });
    await waitFor(() => clock.nextTimerAt() === at + 2 * MINUTE, { what: 'the retry timer' });
    clock.advance(2 * MINUTE);
    await waitFor(async () => (await t.store.messages.get(id))?.status === 'sent', { what: 'the retry to deliver' });
    expect((await outcomes(id)).map((e) => [e.eventType, e.details.attempt])).toEqual([['delivered', 2]]);
  });
});

describe('crash safety', () => {
  it('delivers after a restart a job whose lease was held by a process that died', async () => {
    t = await openTestStore();
    clock = new FakeClock();
    const id = await queueMessage(t.store, { to: ['crash@retry-mail.net'], now: new Date(clock.now()) });
    // The dead process leased the job (for 30 minutes) and never recorded an outcome.
    const { jobs } = await t.store.queue.lease({ owner: 'local', nowMs: clock.now(), max: 10, leaseMs: 30 * MINUTE });
    expect(jobs).toHaveLength(1);
    await t.reopen();

    await newService().start();
    await waitFor(async () => (await t.store.messages.get(id))?.status === 'sent', { what: 'the recovered job to be delivered' });
    expect(await outcomes(id)).toMatchObject([{ eventType: 'delivered', details: { attempt: 1 } }]);
    expect(mx.received.at(-1)?.to).toEqual(['crash@retry-mail.net']);
  });

  it('gives unfinished attempts back to the queue when the shutdown grace period is over', async () => {
    t = await openTestStore();
    clock = new FakeClock();
    routeTo(dns, 'slow-mail.net', '127.0.20.3');
    const s = newService({ 'shutdown.graceMs': 100 });
    await s.start();
    const id = await send(s, ['wait@slow-mail.net']);
    await waitFor(() => slow.rcpts.includes('wait@slow-mail.net'), { what: 'the attempt to reach DATA' });
    const stopped = Date.now();
    await s.stop();
    expect(Date.now() - stopped).toBeLessThan(3000);
    expect((await t.store.queue.jobsOfMessage(id))[0]).toMatchObject({ state: 'queued', attempts: 0, history: [] });
    expect(await outcomes(id)).toEqual([]);
  });
});
