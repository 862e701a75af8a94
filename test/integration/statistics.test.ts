import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventRecord } from '../../src/domain/types.js';
import { startDaemonWithDns, stopDaemonWithDns, type TestDaemon } from '../support/daemon.js';
import type { TestDns } from '../support/dns-server.js';
import { newAccount } from '../support/domains.js';
import { allEvents } from '../support/engine-fixtures.js';
import { counterDeltas, generateEvents } from '../support/events.js';
import { setupSender, type Sender } from '../support/sending.js';
import { finishedMessage } from '../support/signing.js';

const DAY = 86_400_000;
let dns: TestDns;
let t: TestDaemon;
let s1: Sender;
let s2: Sender;
let s3: Sender;
let otherKey: string;
let otherAccountId: string;
let otherSender: Sender;

const totals = (query: Record<string, string>, key?: string) => t.api('GET', `/statistics/totals?${new URLSearchParams(query)}`, { key });

const zero = () => ({ sent: 0, delivered: 0, opened: 0, clicked: 0, bounced: 0, unsubscribed: 0, complained: 0 });

/** The answer computed from the stored events one by one, with the whole-UTC-day rule and the bounce rule. */
function bruteForce(events: EventRecord[], accountId: string, q: Record<string, string>, channelOfKey?: string) {
  const out = { transactional: zero(), broadcast: zero() } as Record<string, Record<string, number>>;
  const day = (ms: number) => Math.floor(ms / DAY);
  const from = q.from ? day(Date.parse(q.from)) : -Infinity;
  const to = q.to ? day(Date.parse(q.to)) : Infinity;
  const tags = q.tags?.split(',');
  for (const { event: e, timeMs, counter, by } of counterDeltas(events)) {
    const d = day(timeMs);
    if (e.accountId !== accountId || d < from || d > to) continue;
    if ((q.channelId && e.channelId !== q.channelId) || (channelOfKey && e.channelId !== channelOfKey)) continue;
    if (tags && !e.tags.some((x) => tags.includes(x))) continue;
    out[e.mailType][counter] += by;
  }
  return out;
}

beforeAll(async () => {
  ({ t, dns } = await startDaemonWithDns({ 'api.rateLimit': 100_000 }));
  [s1, s2, s3] = [await setupSender(t, dns, { deliveryType: 'sandbox' }), await setupSender(t, dns, { deliveryType: 'sandbox' }), await setupSender(t, dns)];
  const now = Date.now();
  await generateEvents(t.daemon.store, { accountId: t.accountId, channelIds: [s1.channelId, s2.channelId, s3.channelId], count: 600, startMs: now - 8 * DAY, endMs: now - 60_000, seed: 11, messages: 80 });
  ({ accountId: otherAccountId, key: otherKey } = await newAccount(t));
  otherSender = await setupSender(t, dns, { deliveryType: 'sandbox', key: otherKey });
  await generateEvents(t.daemon.store, { accountId: otherAccountId, channelIds: [otherSender.channelId], count: 100, startMs: now - 60_000, endMs: now - 1000, seed: 12 });
});

afterAll(() => stopDaemonWithDns({ t, dns }));

describe('GET /statistics/totals', () => {
  const iso = (daysAgo: number, hour = 12) => {
    const d = new Date(Date.now() - daysAgo * DAY);
    d.setUTCHours(hour, 17, 0, 0);
    return d.toISOString();
  };
  const queries: [string, () => Record<string, string>][] = [
    ['no filter', () => ({})],
    ['one channel', () => ({ channelId: s2.channelId })],
    ['a day range cutting through days', () => ({ from: iso(6, 23), to: iso(2, 1) })],
    ['from only', () => ({ from: iso(3) })],
    ['to only', () => ({ to: iso(5) })],
    ['one day', () => ({ from: iso(4, 0), to: iso(4, 23) })],
    ['one tag', () => ({ tags: 'news' })],
    ['several tags, counting an event carrying two of them once', () => ({ tags: 'welcome,billing,promo' })],
    ['an unused tag', () => ({ tags: 'nothing-here' })],
    ['channel, days and tags together', () => ({ channelId: s1.channelId, from: iso(7), to: iso(1), tags: 'promo,news' })],
  ];

  it.each(queries)('matches a brute-force count over the events for %s', async (_name, make) => {
    const q = make();
    const res = await totals(q);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual(bruteForce(await allEvents(t.daemon.store), t.accountId, q));
  });

  it('counts sandbox sends: sent per recipient, delivered and bounced from the simulated outcomes', async () => {
    const before = (await totals({ channelId: s1.channelId, tags: 'fresh' })).body;
    expect(before.transactional).toEqual(zero());
    const res = await t.api('POST', '/send/transactional', {
      headers: { 'x-service-channel-id': s1.channelId },
      body: { from: { email: `a@${s1.domain}` }, to: [{ email: 'x@example.net' }, { email: 'y@example.net' }, { email: 'z@bounce.postrider.invalid' }], subject: 's', text: 't', tags: ['fresh'] },
    });
    expect(res.status).toBe(200);
    await finishedMessage(t.daemon.store, res.body.messageId);
    const after = (await totals({ channelId: s1.channelId, tags: 'fresh' })).body;
    expect(after.transactional).toEqual({ ...zero(), sent: 3, delivered: 2, bounced: 1 });
    expect(after.broadcast).toEqual(zero());
    expect((await totals({})).body).toEqual(bruteForce(await allEvents(t.daemon.store), t.accountId, {}));
  });

  it('keeps accounts apart and limits a channel key to its channel', async () => {
    const theirs = (await totals({}, otherKey)).body;
    expect(theirs).toEqual(bruteForce(await allEvents(t.daemon.store), otherAccountId, {}));
    expect(theirs.transactional.sent + theirs.broadcast.sent).toBeGreaterThan(0);
    expect((await totals({ channelId: otherSender.channelId })).status).toBe(403);
    const key = (await t.daemon.store.apiKeys.create({ accountId: t.accountId, channelId: s3.channelId })).token;
    expect((await totals({}, key)).body).toEqual(bruteForce(await allEvents(t.daemon.store), t.accountId, {}, s3.channelId));
    expect((await totals({ channelId: s1.channelId }, key)).status).toBe(403);
    expect((await totals({ channelId: randomUUID() })).status).toBe(404);
  });

  it.each([
    [{ from: 'last week' }, '/from', 'invalid_format'],
    [{ from: '2026-02-01T00:00:00Z', to: '2026-01-01T00:00:00Z' }, '/to', 'invalid_range'],
    [{ tags: 'a,b c' }, '/tags/1', 'invalid_format'],
    [{ channelId: 'x' }, '/channelId', 'invalid_format'],
  ])('answers 422 for %j on %s', async (query, pointer, code) => {
    const res = await totals(query as Record<string, string>);
    expect(res.status).toBe(422);
    expect(res.body.code).toBe('validation_failed');
    expect(res.body.errors[pointer].map((e: { code: string }) => e.code)).toContain(code);
  });
});
