import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemonWithDns, stopDaemonWithDns, type TestDaemon } from '../support/daemon.js';
import type { TestDns } from '../support/dns-server.js';
import { newAccount } from '../support/domains.js';
import { asItem, bruteForceEvents, EventLedger, generateEvents, type EventsQuery } from '../support/events.js';
import { seedEvents } from '../support/engine-fixtures.js';
import { setupSender, type Sender } from '../support/sending.js';
import { finishedMessage } from '../support/signing.js';

const DAY = 86_400_000;
let dns: TestDns;
let t: TestDaemon;
let a1: Sender;
let a2: Sender;
/** Another account, with its own key, channel and messages. */
let other: { key: string; sender: Sender; messageId: string };
let channelKey: string;
let sentIds: string[] = [];
/** Every event this file made: the oracle of the pages. */
let ledger: EventLedger;

const events = (query: Record<string, string | number>, key?: string) =>
  t.api('GET', `/activity/events?${new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)]))}`, { key });

/** Every page of a filter, following `after` until a page comes back empty (newest first with order=desc). */
async function pageAll(query: Record<string, string>, limit: number, key?: string): Promise<{ items: unknown[]; totals: number[]; pages: number }> {
  const items: unknown[] = [];
  const totals: number[] = [];
  const desc = query.order === 'desc';
  let after = 0;
  for (let pages = 1; ; pages++) {
    const res = await events({ ...query, limit, ...(after > 0 || !desc ? { after } : {}) }, key);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    totals.push(res.body.totalCount);
    if (res.body.results.length === 0) return { items, totals, pages };
    items.push(...res.body.results);
    if (desc && after > 0) expect(res.body.after).toBeLessThan(after);
    else if (!desc) expect(res.body.after).toBeGreaterThan(after);
    after = res.body.after;
    // Newest first, the walk ends at the oldest event: a short page is the last.
    if (desc && res.body.results.length < limit) return { items, totals, pages };
  }
}

async function send(s: Sender, body: Record<string, unknown>, key?: string) {
  const res = await t.api('POST', '/send/transactional', {
    key,
    headers: { 'x-service-channel-id': s.channelId },
    body: { from: { email: `news@${s.domain}` }, text: 'Hi', ...body },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  // A sandbox message's simulated outcome is recorded once it is composed.
  await finishedMessage(t.daemon.store, res.body.messageId);
  return res.body.messageId as string;
}

beforeAll(async () => {
  ({ t, dns } = await startDaemonWithDns({ 'api.rateLimit': 100_000 }));
  a1 = await setupSender(t, dns, { deliveryType: 'sandbox' });
  a2 = await setupSender(t, dns, { deliveryType: 'sandbox' });
  // Synthetic history first (older timestamps), then real sends. Around two days ago events
  // come every 2 minutes and a fifth of them are up to 6 minutes late (out of seq order), which
  // is where the time filters of the tests below cut.
  const now = Date.now();
  const base = { accountId: t.accountId, channelIds: [a1.channelId, a2.channelId] };
  ledger = new EventLedger(t.daemon.store);
  ledger.add(await generateEvents(t.daemon.store, { ...base, count: 500, startMs: now - 5 * DAY, endMs: now - 2 * DAY - 5 * 3_600_000, seed: 7 }));
  ledger.add(await generateEvents(t.daemon.store, { ...base, count: 300, startMs: now - 2 * DAY - 5 * 3_600_000 + 120_000, endMs: now - 2 * DAY + 5 * 3_600_000, seed: 8, lateShare: 0.2, lateMaxMs: 360_000 }));
  ledger.add(await generateEvents(t.daemon.store, { ...base, count: 200, startMs: now - 2 * DAY + 5 * 3_600_000 + 60_000, endMs: now - 3_600_000, seed: 9 }));
  sentIds = [
    ledger.sent(await send(a1, { to: [{ email: 'Ann@Example.net' }, { email: 'x@bounce.postrider.invalid' }], subject: 'Order shipped', tags: ['orders'] })),
    ledger.sent(await send(a2, { to: [{ email: 'bob@example.org' }], subject: 'Password reset', tags: ['security', 'orders'], metadata: { user: 'u1' } })),
  ];
  const { key: otherKey } = await newAccount(t);
  const otherSender = await setupSender(t, dns, { deliveryType: 'sandbox', key: otherKey });
  other = { key: otherKey, sender: otherSender, messageId: ledger.sent(await send(otherSender, { to: [{ email: 'ann@example.net' }], subject: 'Order shipped', tags: ['orders'] }, otherKey)) };
  channelKey = (await t.daemon.store.apiKeys.create({ accountId: t.accountId, channelId: a1.channelId })).token;
});

afterAll(() => stopDaemonWithDns({ t, dns }));

describe('GET /activity/events', () => {
  it('lists the events of a sent message with the fields of spec 2.7, oldest first', async () => {
    const res = await events({ messageId: sentIds[0] });
    expect(res.status).toBe(200);
    expect(res.body.totalCount).toBe(4);
    expect(res.body.results.map((e: { eventType: string }) => e.eventType)).toEqual(['accepted', 'processed', 'delivered', 'bounced']);
    expect(res.body.results[0]).toEqual({
      messageId: sentIds[0],
      channelId: a1.channelId,
      mailType: 'transactional',
      eventType: 'accepted',
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      subject: 'Order shipped',
      recipients: ['ann@example.net', 'x@bounce.postrider.invalid'],
      mailSource: 'api',
      tags: ['orders'],
      metadata: {},
      details: {},
    });
    expect(res.body.results[3].recipients).toEqual(['x@bounce.postrider.invalid']);
    expect(res.body.after).toBeGreaterThan(0);
  });

  it('gives the first 100 events by default and counts all of them', async () => {
    const res = await events({});
    const all = bruteForceEvents(await ledger.all(), t.accountId, {});
    expect(res.body.results).toHaveLength(100);
    expect(res.body.results).toEqual(all.slice(0, 100).map(asItem));
    expect(res.body.totalCount).toBe(all.length);
    expect(res.body.after).toBe(all[99].seq);
  });

  const filters: EventsQuery[] = [
    {},
    { channelId: 'a1' },
    { recipient: 'ANN@example.net' },
    { subject: 'week' },
    { subject: 'SHIPPED' },
    { tags: 'news' },
    { tags: 'welcome,billing' },
    { tags: 'orders' },
    { mailType: 'broadcast' },
    { eventTypes: 'opened' },
    { eventTypes: 'delivered,bounced,clicked' },
    { startDate: 'd-4', endDate: 'd-2' },
    { startDate: 'd-2' },
    { mailType: 'transactional', startDate: 'd-2', endDate: 'd-1' },
    { tags: 'promo', endDate: 'd-2' },
    { startDate: 'd-1' },
    { endDate: 'd-3' },
    { channelId: 'a2', eventTypes: 'opened,clicked', tags: 'promo,news' },
    { recipient: 'bob@example.org', mailType: 'transactional', startDate: 'd-3' },
    { channelId: 'a1', subject: 'invoice', eventTypes: 'processed,delivered', endDate: 'd-2' },
    { tags: 'billing', recipient: 'cy@example.com', mailType: 'broadcast', eventTypes: 'accepted,processed,opened' },
    { recipient: 'nobody@example.com' },
  ];

  /** Replaces placeholders: a1/a2 by channel ids, d-N by N days ago (shifted off whole hours). */
  function resolve(q: EventsQuery): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(q)) {
      if (v === 'a1' || v === 'a2') out[k] = v === 'a1' ? a1.channelId : a2.channelId;
      else if (v.startsWith('d-')) out[k] = new Date(Date.now() - Number(v.slice(2)) * DAY + 1234567).toISOString();
      else out[k] = v;
    }
    return out;
  }

  it.each(filters.map((f) => [JSON.stringify(f), f] as const))('returns exactly the matching events for %s, page by page, with their total', async (_name, f) => {
    const q = resolve(f);
    const expected = bruteForceEvents(await ledger.all(), t.accountId, q);
    const { items, totals } = await pageAll(q, 37);
    expect(items).toEqual(expected.map(asItem));
    expect(new Set(totals)).toEqual(new Set([expected.length]));
  });

  it.each(filters.map((f) => [JSON.stringify(f), f] as const))('returns the same events newest first with order=desc for %s, page by page', async (_name, f) => {
    const q = resolve(f);
    const expected = bruteForceEvents(await ledger.all(), t.accountId, q).reverse();
    const { items, totals } = await pageAll({ ...q, order: 'desc' }, 37);
    expect(items).toEqual(expected.map(asItem));
    expect(new Set(totals)).toEqual(new Set([expected.length]));
  });

  it('includes events stamped exactly at startDate and endDate, late ones too', async () => {
    const all = bruteForceEvents(await ledger.all(), t.accountId, {});
    const late = all.find((e, i) => i > 0 && e.timestamp < all[i - 1].timestamp)!;
    expect(late).toBeDefined();
    const q = { startDate: late.timestamp, endDate: late.timestamp };
    const res = await events(q);
    const expected = bruteForceEvents(all, t.accountId, q);
    expect(res.body.results).toEqual(expected.map(asItem));
    expect(res.body.totalCount).toBe(expected.length);
    expect(res.body.results.map((e: { metadata: unknown }) => e.metadata)).toContainEqual(late.metadata);
  });

  it('pages without a gap or a duplicate while new events are being appended', async () => {
    const store = t.daemon.store;
    const messageId = randomUUID();
    let stop = false;
    let written = 0;
    const writer = (async () => {
      while (!stop) {
        const drafts = [0, 1, 2].map(() => ({
          accountId: t.accountId, channelId: a2.channelId, messageId, mailType: 'broadcast' as const, mailSource: 'api' as const, eventType: 'opened' as const,
          timestamp: new Date().toISOString(), subject: 'Live', recipients: ['live@example.net'], tags: ['live'], metadata: { n: `live-${written++}` }, details: {},
        }));
        ledger.add(await seedEvents(store, drafts));
        await new Promise((r) => setTimeout(r, 2));
      }
    })();
    const q = { channelId: a2.channelId };
    const seen: unknown[] = [];
    let after = 0;
    let pages = 0;
    while (written < 150 || pages < 10) {
      const res = await events({ ...q, limit: 9, after });
      seen.push(...res.body.results);
      if (res.body.results.length > 0) after = res.body.after;
      pages++;
    }
    stop = true;
    await writer;
    for (;;) {
      const res = await events({ ...q, limit: 500, after });
      if (res.body.results.length === 0) break;
      seen.push(...res.body.results);
      after = res.body.after;
    }
    const expected = bruteForceEvents(await ledger.all(), t.accountId, q).map(asItem);
    expect(seen.length).toBe(expected.length);
    expect(seen).toEqual(expected);
    const live = seen.filter((e) => (e as { subject: string }).subject === 'Live');
    expect(live).toHaveLength(written);
  });

  it('keeps totalCount up to date as events arrive, whatever the page', async () => {
    const first = await events({ tags: 'counted' });
    expect(first.body.totalCount).toBe(0);
    const drafts = [0, 1, 2, 3, 4].map(() => ({
      accountId: t.accountId, channelId: a1.channelId, messageId: randomUUID(), mailType: 'transactional' as const, mailSource: 'smtp' as const, eventType: 'clicked' as const,
      timestamp: new Date().toISOString(), subject: 'Count me', recipients: ['c@example.net'], tags: ['counted'], metadata: {}, details: { url: 'https://x.test' },
    }));
    ledger.add(await seedEvents(t.daemon.store, drafts));
    const second = await events({ tags: 'counted', limit: 2 });
    expect(second.body.totalCount).toBe(5);
    const third = await events({ tags: 'counted', limit: 2, after: second.body.after });
    expect(third.body.totalCount).toBe(5);
    expect(third.body.results).toHaveLength(2);
  });

  it('returns an empty page for an unknown message id and keeps `after` where it was', async () => {
    const res = await events({ messageId: randomUUID(), after: 5 });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ totalCount: 0, results: [], after: 5 });
  });
});

describe('access', () => {
  it('shows an account key only its own account\'s events', async () => {
    const { items } = await pageAll({ subject: 'order shipped' }, 500);
    expect(items.length).toBeGreaterThan(0);
    expect(items.every((e) => (e as { messageId: string }).messageId !== other.messageId)).toBe(true);
    const theirs = await pageAll({}, 500, other.key);
    expect(theirs.items.map((e) => (e as { eventType: string }).eventType)).toEqual(['accepted', 'processed', 'delivered']);
    expect(theirs.items.every((e) => (e as { messageId: string }).messageId === other.messageId)).toBe(true);
  });

  it('answers 403 for another account\'s channel or message and 404 for an unknown channel', async () => {
    expect((await events({ channelId: other.sender.channelId })).status).toBe(403);
    expect((await events({ messageId: other.messageId })).status).toBe(403);
    expect((await events({ messageId: sentIds[0] }, other.key)).status).toBe(403);
    const unknown = await events({ channelId: randomUUID() });
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('channel_not_found');
  });

  it('limits a channel key to its channel, and refuses another channel or its messages with 403', async () => {
    const { items } = await pageAll({}, 500, channelKey);
    const expected = bruteForceEvents(await ledger.all(), t.accountId, {}, a1.channelId);
    expect(items).toEqual(expected.map(asItem));
    expect((await events({ channelId: a1.channelId, limit: 1 }, channelKey)).status).toBe(200);
    expect((await events({ channelId: a2.channelId }, channelKey)).status).toBe(403);
    expect((await events({ messageId: sentIds[1] }, channelKey)).status).toBe(403);
    expect((await events({ messageId: sentIds[0] }, channelKey)).body.totalCount).toBe(4);
  });

  it('answers 401 without a valid key', async () => {
    expect((await events({}, 'nope')).status).toBe(401);
    expect((await t.api('GET', '/activity/events', { key: null })).status).toBe(401);
  });
});

describe('validation', () => {
  it.each([
    [{ limit: 0 }, '/limit', 'min_value'],
    [{ limit: 501 }, '/limit', 'max_value'],
    [{ limit: 'ten' }, '/limit', 'invalid_type'],
    [{ after: -1 }, '/after', 'min_value'],
    [{ eventTypes: 'delivered,sent' }, '/eventTypes/1', 'invalid_value'],
    [{ startDate: 'yesterday' }, '/startDate', 'invalid_format'],
    [{ startDate: '2026-01-02T00:00:00Z', endDate: '2026-01-01T00:00:00Z' }, '/endDate', 'invalid_range'],
    [{ channelId: 'not-a-uuid' }, '/channelId', 'invalid_format'],
    [{ messageId: '1234' }, '/messageId', 'invalid_format'],
    [{ tags: 'ok,not ok' }, '/tags/1', 'invalid_format'],
    [{ mailType: 'newsletter' }, '/mailType', 'invalid_value'],
    [{ order: 'newest' }, '/order', 'invalid_value'],
  ])('answers 422 validation_failed for %j on %s', async (query, pointer, code) => {
    const res = await events(query as Record<string, string>);
    expect(res.status).toBe(422);
    expect(res.body.code).toBe('validation_failed');
    expect(res.body.errors[pointer].map((e: { code: string }) => e.code)).toContain(code);
  });

  it('reports every invalid parameter together', async () => {
    const res = await events({ limit: 0, eventTypes: 'x,opened,y', channelId: 'z', tags: '!', startDate: 'then' });
    expect(res.status).toBe(422);
    expect(Object.keys(res.body.errors).sort()).toEqual(['/channelId', '/eventTypes/0', '/eventTypes/2', '/limit', '/startDate', '/tags/0']);
  });
});

describe('GET /activity/messages', () => {
  it('lists messages newest first with order=desc, and pages on to the oldest', async () => {
    const list = (query: Record<string, string | number>) => t.api('GET', `/activity/messages?${new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)]))}`);
    const asc = await list({ limit: 500 });
    const ids = asc.body.results.map((m: { messageId: string }) => m.messageId);
    expect(ids).toEqual(expect.arrayContaining(sentIds));
    const first = await list({ order: 'desc', limit: 2 });
    expect(first.status).toBe(200);
    expect(first.body.totalCount).toBe(asc.body.totalCount);
    const rest = await list({ order: 'desc', limit: 500, after: first.body.after });
    const descIds = [...first.body.results, ...rest.body.results].map((m: { messageId: string }) => m.messageId);
    expect(descIds).toEqual([...ids].reverse());
  });
});
