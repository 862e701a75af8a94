/**
 * The dispatcher's scheduling in real time: the delivery rate (no 1-second window with more
 * starts than delivery.rate) and per-domain concurrency (a slow domain holds its slots and no
 * more), with real SMTP servers on 127.0.30.x where the MX matters.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { AttemptFn } from '../../src/delivery/attempt.js';
import { DeliveryService, LEASE_AHEAD_PER_SLOT } from '../../src/delivery/dispatcher.js';
import type { DnsResolver } from '../../src/dns/resolver.js';
import { routeTo } from '../support/delivery-rig.js';
import { ACCOUNT, deliveryConfig, jobsOf, openTestStore, queueMessage, silentLogger, testDeliveryService, type TestStore } from '../support/delivery.js';
import { startDnsServer, testResolver, type TestDns } from '../support/dns-server.js';
import { startMxServer, type MxServer } from '../support/mx-server.js';
import { waitFor } from '../support/wait.js';
import { maxInWindow } from '../support/windows.js';

let dns: TestDns;
let resolver: DnsResolver;
let t: TestStore;

/** The status of each message, in the order of `ids`. */
const statuses = async (ids: readonly string[]) => Promise.all(ids.map(async (id) => (await t.store.messages.get(id))?.status));
let service: DeliveryService | undefined;

beforeAll(async () => {
  dns = await startDnsServer();
  resolver = testResolver(dns, { cache: true });
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

describe('delivery rate', () => {
  it('never starts more than delivery.rate attempts in any 1-second window (20/s over 60 jobs)', async () => {
    t = await openTestStore();
    const starts: number[] = [];
    const attempt: AttemptFn = async ({ job }) => {
      starts.push(performance.now());
      return { recipients: job.recipients.map((recipient) => ({ recipient, outcome: 'delivered', category: 'delivered', phase: 'message', smtpCode: 250, response: '250 OK' })), tls: true, response: '250 OK' };
    };
    const ids: string[] = [];
    for (let i = 0; i < 60; i++) ids.push(await queueMessage(t.store, { to: [`r${i}@d${i}-mail.net`] }));
    service = new DeliveryService({ store: t.store, config: deliveryConfig({ 'delivery.rate': 20 }), resolver, logger: silentLogger(), attempt });
    await service.start();
    await waitFor(async () => (await statuses(ids)).every((st) => st === 'sent'), { what: 'all 60 messages', timeout: 15_000 });

    const sorted = [...starts].sort((a, b) => a - b);
    const elapsed = (sorted[sorted.length - 1] - sorted[0]) / 1000;
    const busiest = maxInWindow(sorted, 1000);
    // The limiter bounds admissions exactly (test/unit/delivery-rate-limiter.test.ts, fake
    // clock); here the starts are timed inside the attempt, after the event loop got to it, and
    // on a loaded 2-core CI machine that lag varies by tens of milliseconds between batches.
    // So the real-time check allows 50 ms of it: no 950 ms window may hold more than the rate.
    const busiestTolerant = maxInWindow(sorted, 950);
    // Measured, for the record: starts per second over the run and the busiest 1 s window.
    console.info(`rate 20/s: 60 starts in ${elapsed.toFixed(2)} s = ${(59 / elapsed).toFixed(1)}/s, busiest 1-second window ${busiest}, busiest 950 ms window ${busiestTolerant}`);
    expect(busiestTolerant).toBeLessThanOrEqual(20);
    expect(elapsed).toBeGreaterThan(2.5); // 60 at 20/s cannot be faster than ~2.9 s
    expect(elapsed).toBeLessThan(4.5); // and the limiter does not dawdle
  });
});

describe('per-domain concurrency', () => {
  let slowMx: MxServer;
  let fastMx: MxServer;

  beforeAll(async () => {
    slowMx = await startMxServer({ address: '127.0.30.2', dataDelayMs: 300 });
    fastMx = await startMxServer({ address: '127.0.30.3', port: slowMx.port });
    routeTo(dns, 'slow-mail.net', '127.0.30.2');
    routeTo(dns, 'fast-mail.net', '127.0.30.3');
  });

  afterAll(async () => {
    await Promise.all([slowMx.close(), fastMx.close()]);
  });

  it('keeps a slow domain to its concurrency limit while other domains go first', async () => {
    t = await openTestStore();
    const slowIds: string[] = [];
    const fastIds: string[] = [];
    // The slow domain's jobs are older: a plain FIFO would send all of them first.
    for (let i = 0; i < 8; i++) slowIds.push(await queueMessage(t.store, { to: [`s${i}@slow-mail.net`], now: new Date(Date.now() - 10_000 + i) }));
    for (let i = 0; i < 4; i++) fastIds.push(await queueMessage(t.store, { to: [`f${i}@fast-mail.net`], now: new Date(Date.now() - 5_000 + i) }));
    service = testDeliveryService(t.store, resolver, { 'delivery.port': slowMx.port, 'delivery.rate': 1000, 'delivery.perDomainConcurrency': 2 });
    await service.start();
    const fastDone = await waitFor(async () => (await statuses(fastIds)).every((st) => st === 'sent') && Date.now(), { what: 'the fast domain' });
    const slowSentWhenFastDone = (await statuses(slowIds)).filter((st) => st === 'sent').length;
    await waitFor(async () => (await statuses(slowIds)).every((st) => st === 'sent'), { what: 'the slow domain', timeout: 15_000 });
    expect(fastDone).toBeGreaterThan(0);
    expect(slowSentWhenFastDone).toBeLessThan(8);
    expect(slowMx.maxConcurrentData).toBe(2);
    expect(slowMx.received).toHaveLength(8);
  });
});

describe('lease scan', () => {
  it('comes back to due jobs it skipped earlier instead of sleeping until the idle check', async () => {
    // One busy domain and a scan window (500 due entries) smaller than the queue: the scan's
    // round-robin cursor ends up behind every job still due. With nothing in flight, only a
    // rescan from the start finds them; before the fix the dispatcher slept for idleCheckMs.
    t = await openTestStore();
    const attempt: AttemptFn = async ({ job }) => ({
      recipients: job.recipients.map((recipient) => ({ recipient, outcome: 'delivered', category: 'delivered', phase: 'message', smtpCode: 250, response: '250 OK' })),
      tls: true,
      response: '250 OK',
    });
    const ids: string[] = [];
    for (let i = 0; i < 600; i++) ids.push(await queueMessage(t.store, { to: [`r${i}@busy-mail.net`] }));
    service = new DeliveryService({
      store: t.store,
      config: deliveryConfig({ 'delivery.rate': 100_000, 'delivery.perDomainConcurrency': 1 }),
      resolver,
      logger: silentLogger(),
      attempt,
      batchSize: 1,
      idleCheckMs: 600_000,
    });
    await service.start();
    await waitFor(async () => (await statuses(ids)).every((st) => st === 'sent'), { what: 'all 600 messages', timeout: 20_000 });
  }, 30_000);
});

describe('lease ahead', () => {
  /** Attempts that deliver when the test says so: `finish[i]()` ends the i-th one started. */
  function heldAttempts(): { started: string[]; finish: Array<() => void>; attempt: AttemptFn } {
    const started: string[] = [];
    const finish: Array<() => void> = [];
    const attempt: AttemptFn = ({ job }) => {
      started.push(job.recipients[0]);
      return new Promise((resolve) => {
        finish.push(() =>
          resolve({ recipients: job.recipients.map((recipient) => ({ recipient, outcome: 'delivered', category: 'delivered', phase: 'message', smtpCode: 250, response: '250 OK' })), tls: true, response: '250 OK' }),
        );
      });
    };
    return { started, finish, attempt };
  }

  it('starts a job leased ahead as soon as its site frees a slot, and stop() gives the ones still waiting back', async () => {
    t = await openTestStore();
    const { started, finish, attempt } = heldAttempts();
    // The site's one slot, LEASE_AHEAD_PER_SLOT jobs leased ahead of it, and two more left due.
    const ahead = LEASE_AHEAD_PER_SLOT;
    const n = 1 + ahead + 2;
    const ids: string[] = [];
    for (let i = 0; i < n; i++) ids.push(await queueMessage(t.store, { to: [`r${i}@one-mail.net`], now: new Date(Date.now() - 10_000 + i) }));
    const state = async () => (await Promise.all(ids.map((id) => jobsOf(t.store, id)))).map((jobs) => jobs[0].state);
    const states = (...runs: Array<[string, number]>) => runs.flatMap(([s, k]) => Array<string>(k).fill(s)).join();
    service = new DeliveryService({ store: t.store, config: deliveryConfig({ 'delivery.rate': 1000, 'delivery.perDomainConcurrency': 1 }), resolver, logger: silentLogger(), attempt });
    await service.start();
    // In due order: the first in flight, the next ones leased ahead, the rest stay due.
    await waitFor(async () => started.length === 1 && (await state()).join() === states(['leased', 1 + ahead], ['queued', 2]), { what: 'one attempt and the jobs leased ahead' });
    finish[0]();
    await waitFor(() => started.length === 2, { what: 'the job leased ahead to start' });
    expect(started).toEqual(['r0@one-mail.net', 'r1@one-mail.net']);
    await waitFor(async () => (await state()).join() === states(['done', 1], ['leased', 1 + ahead], ['queued', 1]), { what: 'the next job leased ahead' });
    const stopping = service.stop();
    // The jobs waiting in the dispatcher go back to due at once; the one in flight finishes.
    await waitFor(async () => (await state()).slice(2).every((s) => s === 'queued'), { what: 'the jobs leased ahead given back' });
    finish[1]();
    await stopping;
    service = undefined;
    expect(await state()).toEqual(['done', 'done', ...Array<string>(n - 2).fill('queued')]);
    for (const id of ids.slice(2)) expect((await jobsOf(t.store, id))[0].attempts).toBe(0);
    expect(started).toHaveLength(2);
  });

  it('ends the jobs leased ahead whose channel was deleted, without an attempt, when their site frees a slot, and starts the next one', async () => {
    t = await openTestStore();
    const gone = await t.store.channels.create({ accountId: ACCOUNT, name: 'deleted later', deliveryType: 'live', tracking: { links: false, opens: false }, maxPerAccount: 10 });
    const { started, finish, attempt } = heldAttempts();
    // One slot: r0 in flight, r1 to r3 leased ahead of it (LEASE_AHEAD_PER_SLOT is at least 3); r1 and r2 are the channel's.
    expect(LEASE_AHEAD_PER_SLOT).toBeGreaterThanOrEqual(3);
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const channelId = i === 1 || i === 2 ? gone.id : undefined;
      ids.push(await queueMessage(t.store, { to: [`r${i}@one-mail.net`], channelId, now: new Date(Date.now() - 10_000 + i) }));
    }
    const state = async () => (await Promise.all(ids.map((id) => jobsOf(t.store, id)))).map((jobs) => jobs.map((j) => j.state).join() || 'removed');
    service = new DeliveryService({ store: t.store, config: deliveryConfig({ 'delivery.rate': 1000, 'delivery.perDomainConcurrency': 1 }), resolver, logger: silentLogger(), attempt });
    await service.start();
    await waitFor(async () => started.length === 1 && (await state()).every((s) => s === 'leased'), { what: 'one attempt and three jobs leased ahead' });
    expect(await t.store.channels.delete(gone.id)).toBe(true);
    finish[0]();
    await waitFor(() => started.length === 2, { what: 'the next job of a live channel to start' });
    expect(started).toEqual(['r0@one-mail.net', 'r3@one-mail.net']);
    await waitFor(async () => (await state()).join() === ['done', 'removed', 'removed', 'leased'].join(), { what: "the deleted channel's jobs removed" });
    finish[1]();
    await waitFor(async () => (await state())[3] === 'done', { what: 'the last job done' });
    expect(started).toHaveLength(2);
  });
});
