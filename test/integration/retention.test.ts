import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log/logger.js';
import { RetentionSweeper, retentionWindow } from '../../src/retention/sweeper.js';
import { startDaemonWithDns, stopDaemonWithDns, type TestDaemon } from '../support/daemon.js';
import type { TestDns } from '../support/dns-server.js';
import { allEvents as loggedEvents, danglingIndexEntries, messageJobLinks } from '../support/engine-fixtures.js';
import { asItem, bruteForceEvents, generateEvents } from '../support/events.js';
import { setupSender, type Sender } from '../support/sending.js';
import { finishedMessage, signedBody } from '../support/signing.js';

const DAY = 86_400_000;
let dns: TestDns;
let t: TestDaemon;
let sandbox: Sender;
let live: Sender;
let clock = Date.now();

/** A sweeper of its own with a movable clock and small batches (the daemon's keeps 10 years). */
const sweeper = () =>
  new RetentionSweeper({ store: t.daemon.store, coordination: t.daemon.coordination, retentionDays: 1, logger: createLogger({ level: 'silent' }), now: () => clock, batch: 37 });

async function allEvents(query: Record<string, string> = {}) {
  const items: unknown[] = [];
  let after = 0;
  let totalCount = -1;
  for (;;) {
    const res = await t.api('GET', `/activity/events?${new URLSearchParams({ ...query, limit: '500', after: String(after) })}`);
    expect(res.status).toBe(200);
    totalCount = res.body.totalCount;
    if (res.body.results.length === 0) return { items, totalCount };
    items.push(...res.body.results);
    after = res.body.after;
  }
}

async function send(s: Sender): Promise<string> {
  const res = await t.api('POST', '/send/transactional', {
    headers: { 'x-service-channel-id': s.channelId },
    body: { from: { email: `a@${s.domain}` }, to: [{ email: 'ann@example.net' }, { email: 'bob@example.org' }], subject: 'Keep me?', text: 't' },
  });
  expect(res.status).toBe(200);
  return res.body.messageId;
}

beforeAll(async () => {
  ({ t, dns } = await startDaemonWithDns({ 'retention.days': 3650, 'api.rateLimit': 100_000 }));
  // The daemon's own sweep (5 s after its start) would take the tests' old DNS failures, which
  // leave their 7-day window whatever retention.days says, from under the tests' sweepers.
  await t.daemon.retention.stop();
  sandbox = await setupSender(t, dns, { deliveryType: 'sandbox' });
  live = await setupSender(t, dns);
});

afterAll(() => stopDaemonWithDns({ t, dns }));

describe('retention sweep', () => {
  it('waits at an unfinished message for at most the schedule window and the queue age past retention.days', () => {
    const day = 86_400_000;
    expect(retentionWindow({ retention: { days: 30 }, limits: { maxScheduleDays: 30 }, delivery: { maxAgeMs: 3 * day } })).toEqual({ retentionDays: 30, longestUnfinishedMs: 33 * day });
  });

  it('runs as a daemon component', () => {
    expect(t.daemon.retention).toBeInstanceOf(RetentionSweeper);
  });

  it('removes old events with their index entries in small batches, keeps counters, and paging stays exact', async () => {
    const store = t.daemon.store;
    const now = Date.now();
    const old = await generateEvents(store, { accountId: t.accountId, channelIds: [sandbox.channelId], count: 300, startMs: now - 10 * DAY, endMs: now - 5 * DAY, seed: 3 });
    const recent = await generateEvents(store, { accountId: t.accountId, channelIds: [sandbox.channelId], count: 100, startMs: now - 3_600_000, endMs: now - 1000, seed: 4 });
    const statsBefore = (await t.api('GET', '/statistics/totals')).body;
    expect((await allEvents()).totalCount).toBe(400); // also fills the count cache

    clock = now;
    const swept = await sweeper().sweepNow();
    expect(swept.events).toBe(300);

    expect((await store.events.bounds()).floor).toBe(recent[0].seq);
    const removed = new Set(old.map((e) => e.seq));
    // No port verb lists raw index entries: the engine fixture reads them (the by-filter and by-message indexes).
    expect(await danglingIndexEntries(store, removed)).toEqual([]);

    const list = await allEvents();
    expect(list.items).toEqual(recent.map(asItem));
    expect(list.totalCount).toBe(100);
    const since = new Date(now - 30 * 60_000).toISOString();
    const tail = await allEvents({ startDate: since, tags: 'news,promo' });
    expect(tail.items).toEqual(bruteForceEvents(await loggedEvents(store), t.accountId, { startDate: since, tags: 'news,promo' }).map(asItem));
    expect((await t.api('GET', '/statistics/totals')).body).toEqual(statsBefore);
  });

  it('removes a finished message with its body, and keeps a queued one whole until retention.days after its delivery is done', async () => {
    const store = t.daemon.store;
    const done = await send(sandbox);
    const queued = await send(live);
    // Its body exists once the finishing stage composed it, a moment after the 200; the sandbox
    // message is finished then too (retention keeps a message waiting to be signed).
    await signedBody(store, queued);
    await finishedMessage(store, done);
    expect((await store.messages.get(queued))!.openJobs).toBe(2);

    clock = Date.now() + 3 * DAY;
    expect((await sweeper().sweepNow()).heldBy).toBe(queued);
    expect(await store.messages.get(done)).toBeUndefined();
    expect(await store.messages.body(done)).toBeUndefined();
    expect((await t.api('GET', `/activity/messages/${done}`)).status).toBe(404);
    expect(await store.messages.body(queued)).toBeDefined();
    const kept = await t.api('GET', `/activity/messages/${queued}`);
    expect(kept.body.events.map((e: { eventType: string }) => e.eventType)).toEqual(['accepted', 'processed']);
    expect((await t.api('GET', '/activity/messages')).body.results.map((m: { messageId: string }) => m.messageId)).toEqual([queued]);
    expect(await store.retention.isPending(queued)).toBe(false);

    // The message's delivery finishes: here the operator drops its jobs (QueuePort.drop), which
    // closes them and the message as a last delivery attempt does. It stays retention.days more.
    for (const job of await store.queue.jobsOfMessage(queued)) expect((await store.queue.drop(job.id, new Date())).result).toBe('ok');
    clock = Date.now() + DAY / 2;
    expect((await sweeper().sweepNow()).messages).toBe(0);
    expect((await t.api('GET', `/activity/messages/${queued}`)).body.events).toHaveLength(4);
    clock = Date.now() + 3 * DAY;
    const again = await sweeper().sweepNow();
    expect(again.messages).toBe(1);
    expect(again.heldBy).toBeUndefined();
    expect(await loggedEvents(store)).toEqual([]);
    expect(await store.messages.get(queued)).toBeUndefined();
    expect(await store.messages.body(queued)).toBeUndefined();
    expect(await store.queue.jobsOfMessage(queued)).toEqual([]);
    expect(await messageJobLinks(store)).toEqual([]);
    expect(await store.retention.isPending(queued)).toBe(false);
  });

  it("drops recipient domains' hard DNS failures older than their 7-day window, and the entries left with none, in batches", async () => {
    const store = t.daemon.store;
    const now = Date.now();
    const fail = (accountId: string, domain: string, atMs: number) => store.dnsFailures.countFailure({ accountId, domain, atMs });
    // 90 domains that failed once, 8 days ago: more than two batches of 37.
    for (let i = 0; i < 90; i++) await fail(t.accountId, `gone-${String(i).padStart(2, '0')}-mail.net`, now - 8 * DAY);
    await fail(t.accountId, 'mixed-mail.net', now - 9 * DAY);
    await fail(t.accountId, 'mixed-mail.net', now - 2 * DAY);
    await fail(t.accountId, 'fresh-mail.net', now - 3_600_000);
    await fail('another-account', 'gone-00-mail.net', now - 6 * DAY);

    clock = now;
    expect((await sweeper().sweepNow()).dnsFailures).toBe(90);
    expect(await store.dnsFailures.recent(t.accountId, 'gone-00-mail.net')).toEqual([]);
    expect(await store.dnsFailures.recent(t.accountId, 'gone-89-mail.net')).toEqual([]);
    expect(await store.dnsFailures.recent(t.accountId, 'mixed-mail.net')).toEqual([now - 2 * DAY]);
    expect(await store.dnsFailures.recent(t.accountId, 'fresh-mail.net')).toEqual([now - 3_600_000]);
    expect(await store.dnsFailures.recent('another-account', 'gone-00-mail.net')).toEqual([now - 6 * DAY]);

    // A day on, the 6-day-old failure has left its window too; the rest stay.
    clock = now + 1.5 * DAY;
    expect((await sweeper().sweepNow()).dnsFailures).toBe(1);
    expect(await store.dnsFailures.recent('another-account', 'gone-00-mail.net')).toEqual([]);
    expect(await store.dnsFailures.recent(t.accountId, 'mixed-mail.net')).toEqual([now - 2 * DAY]);
  });

  it('keeps numbering after an emptied log, and new events are listed again', async () => {
    const before = (await t.daemon.store.events.bounds()).floor;
    const id = await send(sandbox);
    // Its simulated outcome is recorded once it is composed.
    await finishedMessage(t.daemon.store, id);
    const list = await allEvents({ messageId: id });
    expect(list.items.map((e) => (e as { eventType: string }).eventType)).toEqual(['accepted', 'processed', 'delivered']);
    expect(list.totalCount).toBe(3);
    expect((await t.daemon.store.events.bounds()).floor).toBe(before);
    expect((await allEvents()).totalCount).toBe(3);
  });
});
