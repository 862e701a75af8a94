import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventRecord } from '../../src/domain/types.js';
import { startDaemonWithDns, stopDaemonWithDns, type TestDaemon } from '../support/daemon.js';
import type { TestDns } from '../support/dns-server.js';
import { newAccount } from '../support/domains.js';
import { forgetMessage } from '../support/engine-fixtures.js';
import { bruteForceEvents, EventLedger, generateEvents, type EventsQuery } from '../support/events.js';
import { setupSender, type Sender } from '../support/sending.js';
import { signedBody } from '../support/signing.js';

const DAY = 86_400_000;
let dns: TestDns;
let t: TestDaemon;
let sandbox: Sender;
let live: Sender;
let liveIds: string[] = [];
let sandboxIds: string[] = [];
let other: { key: string; sender: Sender };
let channelKey: string;
/** Every event this file made: the oracle's input. */
let ledger: EventLedger;

const list = (query: Record<string, string | number>, key?: string) =>
  t.api('GET', `/activity/messages?${new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)]))}`, { key });

async function send(s: Sender, body: Record<string, unknown>, key?: string) {
  const res = await t.api('POST', '/send/transactional', {
    key,
    headers: { 'x-service-channel-id': s.channelId },
    body: { from: { email: `news@${s.domain}` }, text: 'Hi', ...body },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.messageId as string;
}

/** The expected list: accepted events through the event oracle, each with its message's state. */
async function oracle(q: EventsQuery & { status?: string }, channelOfKey?: string) {
  const { status, ...rest } = q;
  const accepted = bruteForceEvents(await ledger.all(), t.accountId, { ...rest, eventTypes: 'accepted' }, channelOfKey);
  const records = await Promise.all(accepted.map((e) => t.daemon.store.messages.get(e.messageId)));
  return accepted
    .map((e: EventRecord, i) => {
      const m = records[i];
      return {
        seq: e.seq,
        item: {
          messageId: e.messageId,
          channelId: e.channelId,
          timestamp: e.timestamp,
          mailType: e.mailType,
          mailSource: e.mailSource,
          deliveryType: m?.deliveryType ?? (e.channelId === live.channelId ? 'live' : 'sandbox'),
          status: m?.status ?? 'sent',
          subject: e.subject,
          recipients: e.recipients,
          ...(m ? { from: m.from } : {}),
        },
      };
    })
    .filter((x) => !status || x.item.status === status);
}

/** Every page of a query, following `after`. */
async function pageAll(query: Record<string, string>, limit: number, key?: string) {
  const items: unknown[] = [];
  const totals: number[] = [];
  let after = 0;
  for (;;) {
    const res = await list({ ...query, limit, after }, key);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    totals.push(res.body.totalCount);
    if (res.body.results.length === 0) return { items, totals };
    items.push(...res.body.results);
    expect(res.body.after).toBeGreaterThan(after);
    after = res.body.after;
  }
}

beforeAll(async () => {
  ({ t, dns } = await startDaemonWithDns({ 'api.rateLimit': 100_000 }));
  sandbox = await setupSender(t, dns, { deliveryType: 'sandbox' });
  live = await setupSender(t, dns, { deliveryType: 'live' });
  // Synthetic history (accepted events among others, without message records), then real sends.
  const now = Date.now();
  ledger = new EventLedger(t.daemon.store);
  ledger.add(await generateEvents(t.daemon.store, { accountId: t.accountId, channelIds: [sandbox.channelId, live.channelId], count: 600, startMs: now - 6 * DAY, endMs: now - DAY, seed: 21, messages: 120 }));
  for (let i = 0; i < 6; i++) {
    sandboxIds.push(ledger.sent(await send(sandbox, { to: [{ email: i % 2 ? 'Ann@Example.net' : 'bob@example.org' }], subject: `Receipt ${i}`, tags: i % 3 ? ['orders'] : ['news'] })));
  }
  // No MX anywhere for this domain: live messages stay queued, deferred.
  for (let i = 0; i < 3; i++) liveIds.push(ledger.sent(await send(live, { to: [{ email: `u${i}@nowhere.example` }], subject: `Live ${i}`, tags: ['orders'] })));
  const { key: otherKey } = await newAccount(t);
  other = { key: otherKey, sender: await setupSender(t, dns, { deliveryType: 'sandbox', key: otherKey }) };
  ledger.sent(await send(other.sender, { to: [{ email: 'ann@example.net' }], subject: 'Receipt x' }, otherKey));
  channelKey = (await t.daemon.store.apiKeys.create({ accountId: t.accountId, channelId: sandbox.channelId })).token;
});

afterAll(() => stopDaemonWithDns({ t, dns }));

describe('GET /activity/messages', () => {
  it('lists a sent message with every field the SDK reads', async () => {
    const res = await list({ recipient: 'ann@example.net', subject: 'Receipt 1' });
    expect(res.status).toBe(200);
    expect(res.body.totalCount).toBe(1);
    expect(res.body.results).toEqual([
      {
        messageId: sandboxIds[1],
        channelId: sandbox.channelId,
        timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        mailType: 'transactional',
        mailSource: 'api',
        deliveryType: 'sandbox',
        status: 'sent',
        subject: 'Receipt 1',
        recipients: ['ann@example.net'],
        from: { email: `news@${sandbox.domain}` },
      },
    ]);
    expect(res.body.after).toBeGreaterThan(0);
  });

  it('leaves out `from` once retention removed the message record (its accepted event stays)', async () => {
    const id = ledger.sent(await send(sandbox, { to: [{ email: 'gone-soon@example.net' }], subject: 'Expired record' }));
    const store = t.daemon.store;
    // Composed and signed first, as a message retention removes is long finished.
    await signedBody(store, id);
    await forgetMessage(store, id);
    const res = await list({ recipient: 'gone-soon@example.net' });
    expect(res.status).toBe(200);
    expect(res.body.results).toHaveLength(1);
    expect(res.body.results[0]).toMatchObject({ messageId: id, subject: 'Expired record', status: 'sent' });
    expect(res.body.results[0]).not.toHaveProperty('from');
  });

  it('shows a live message waiting for delivery as queued, and as sent once its last job is finished', async () => {
    const queued = await list({ status: 'queued' });
    expect(queued.body.results.map((m: { messageId: string }) => m.messageId)).toEqual(liveIds);
    expect(queued.body.results[0]).toMatchObject({ deliveryType: 'live', status: 'queued', subject: 'Live 0' });
    expect(queued.body.totalCount).toBe(3);
    const sentBefore = (await list({ status: 'sent' })).body.totalCount;

    for (const job of await t.daemon.store.queue.jobsOfMessage(liveIds[0])) {
      // A job can be leased for an attempt right now; it comes back as queued soon after.
      await expect.poll(async () => (await t.daemon.store.queue.drop(job.id, new Date())).result, { timeout: 10_000 }).toBe('ok');
    }
    const after = await list({ status: 'queued' });
    expect(after.body.results.map((m: { messageId: string }) => m.messageId)).toEqual(liveIds.slice(1));
    expect(after.body.totalCount).toBe(2);
    const sent = await list({ status: 'sent', channelId: live.channelId, subject: 'Live' });
    expect(sent.body.results).toEqual([expect.objectContaining({ messageId: liveIds[0], status: 'sent' })]);
    expect((await list({ status: 'sent' })).body.totalCount).toBe(sentBefore + 1);
  });

  const d = (days: number) => new Date(Date.now() - days * DAY).toISOString();
  const queries: Record<string, string>[] = [
    {},
    { channelId: 'sandbox' },
    { recipient: 'ANN@example.net' },
    { subject: 'receipt' },
    { tags: 'orders' },
    { tags: 'news,welcome' },
    { mailType: 'transactional' },
    { mailType: 'broadcast' },
    { startDate: d(4), endDate: d(2) },
    { startDate: d(1) },
    { status: 'queued' },
    { status: 'sent' },
    { status: 'sent', tags: 'orders', channelId: 'live' },
    { status: 'queued', recipient: 'u2@nowhere.example' },
  ];
  for (const raw of queries) {
    it(`pages through ${JSON.stringify(raw)} exactly like the event list's accepted events`, async () => {
      const q = { ...raw };
      if (q.channelId) q.channelId = q.channelId === 'live' ? live.channelId : sandbox.channelId;
      const expected = await oracle(q);
      const all = await pageAll(q, 7);
      expect(all.items).toEqual(expected.map((x) => x.item));
      expect(new Set(all.totals)).toEqual(new Set([expected.length]));
    });
  }

  it('gives `after` as the cursor: the next page starts strictly after it, default 100 per page', async () => {
    const expected = await oracle({});
    const first = await list({ limit: 5 });
    expect(first.body.after).toBe(expected[4].seq);
    const second = await list({ limit: 5, after: first.body.after });
    expect(second.body.results).toEqual(expected.slice(5, 10).map((x) => x.item));
    expect((await list({})).body.results).toHaveLength(Math.min(100, expected.length));
  });

  it('limits a channel key to its channel and refuses another channel with 403', async () => {
    const all = await pageAll({}, 50, channelKey);
    expect(all.items).toEqual((await oracle({}, sandbox.channelId)).map((x) => x.item));
    expect((await list({ channelId: live.channelId }, channelKey)).status).toBe(403);
  });

  it("answers 403 for another account's channel and keeps accounts apart", async () => {
    const res = await list({ channelId: other.sender.channelId });
    expect(res.status).toBe(403);
    const theirs = await list({}, other.key);
    expect(theirs.body.totalCount).toBe(1);
    expect(theirs.body.results[0].channelId).toBe(other.sender.channelId);
  });

  it('answers 401 without a valid key', async () => {
    expect((await list({}, null as unknown as string)).status).toBe(401);
    expect((await list({}, 'not-a-key')).status).toBe(401);
  });

  it('reports every invalid parameter in one 422 with JSON pointers', async () => {
    const res = await list({ limit: 501, status: 'delivered', channelId: 'nope', tags: 'ok,bad tag', startDate: 'yesterday', after: -1 });
    expect(res.status).toBe(422);
    expect(res.body.code).toBe('validation_failed');
    expect(Object.keys(res.body.errors).sort()).toEqual(['/after', '/channelId', '/limit', '/startDate', '/status', '/tags/1'].sort());
  });
});
