import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventRecord } from '../../src/domain/types.js';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import { startDnsServer, type TestDns } from '../support/dns-server.js';
import { newAccount } from '../support/domains.js';
import { counterDeltas, EventLedger, generateEvents } from '../support/events.js';
import { seedEvents } from '../support/engine-fixtures.js';
import { setupSender, type Sender } from '../support/sending.js';
import { finishedMessage } from '../support/signing.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
let dns: TestDns;
let t: TestDaemon;
let s1: Sender;
let s2: Sender;
let s3: Sender;
let other: { key: string; sender: Sender };
/** Every event this file made: the oracle's input. */
let ledger: EventLedger;

const get = (path: string, query: Record<string, string>, key?: string) => t.api('GET', `${path}?${new URLSearchParams(query)}`, { key });
const zero = () => ({ sent: 0, delivered: 0, opened: 0, clicked: 0, bounced: 0, unsubscribed: 0, complained: 0 });

/** The calendar date of an instant in a zone, computed by Intl alone (independent of the daemon's edges). */
const localDate = (zone: string, ms: number) => new Intl.DateTimeFormat('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(ms);

/** Per bucket name, the counters the stored events make under the counting rule. */
async function oracle(bucketOf: (ms: number) => string, q: { channelId?: string; tags?: string }, channelOfKey?: string) {
  const out = new Map<string, Record<string, Record<string, number>>>();
  const tags = q.tags?.split(',');
  for (const { event: e, timeMs, counter, by } of counterDeltas(await ledger.all())) {
    if (e.accountId !== t.accountId) continue;
    if ((q.channelId && e.channelId !== q.channelId) || (channelOfKey && e.channelId !== channelOfKey)) continue;
    if (tags && !e.tags.some((x) => tags.includes(x))) continue;
    const b = bucketOf(timeMs);
    if (!out.has(b)) out.set(b, { transactional: zero(), broadcast: zero() });
    out.get(b)![e.mailType][counter] += by;
  }
  return out;
}

function expectMatches(results: { timestamp: string; transactional: unknown; broadcast: unknown }[], expected: Map<string, unknown>, bucketOf: (ms: number) => string) {
  for (const r of results) {
    expect({ at: r.timestamp, transactional: r.transactional, broadcast: r.broadcast }).toEqual({ at: r.timestamp, ...(expected.get(bucketOf(Date.parse(r.timestamp))) ?? { transactional: zero(), broadcast: zero() }) });
  }
}

beforeAll(async () => {
  dns = await startDnsServer();
  // Events of March and October 2026 are older than the default retention; the oracle needs them.
  t = await startDaemon({ 'dns.servers': [dns.address], 'api.rateLimit': 100_000, 'retention.days': 3650 });
  [s1, s2, s3] = [await setupSender(t, dns, { deliveryType: 'sandbox' }), await setupSender(t, dns, { deliveryType: 'sandbox' }), await setupSender(t, dns, { deliveryType: 'sandbox' })];
  const base = { accountId: t.accountId, channelIds: [s1.channelId, s2.channelId] };
  ledger = new EventLedger(t.daemon.store);
  // Around both of Europe/Berlin's 2026 clock changes (29 March, 25 October), and the last days.
  ledger.add(await generateEvents(t.daemon.store, { ...base, count: 500, startMs: Date.parse('2026-03-27T12:00:00Z'), endMs: Date.parse('2026-03-31T12:00:00Z'), seed: 31, messages: 50 }));
  ledger.add(await generateEvents(t.daemon.store, { ...base, count: 500, startMs: Date.parse('2026-10-23T12:00:00Z'), endMs: Date.parse('2026-10-27T12:00:00Z'), seed: 32, messages: 50 }));
  ledger.add(await generateEvents(t.daemon.store, { ...base, count: 400, startMs: Date.now() - 3 * DAY, endMs: Date.now() - 60_000, seed: 33, messages: 60 }));
  const { accountId, key } = await newAccount(t);
  other = { key, sender: await setupSender(t, dns, { deliveryType: 'sandbox', key }) };
  ledger.add(await generateEvents(t.daemon.store, { accountId, channelIds: [other.sender.channelId], count: 100, startMs: Date.parse('2026-03-28T00:00:00Z'), endMs: Date.parse('2026-03-30T00:00:00Z'), seed: 34 }));
});

afterAll(async () => {
  await t?.stop();
  await dns?.close();
});

describe('GET /statistics/daily', () => {
  it('gives Europe/Berlin days, 23 hours long on 29 March and 25 hours on 25 October, zeros included', async () => {
    const spring = await get('/statistics/daily', { timezone: 'Europe/Berlin', from: '2026-03-27T12:00:00Z', to: '2026-03-31T12:00:00Z' });
    expect(spring.status, JSON.stringify(spring.body)).toBe(200);
    expect(spring.body.results.map((r: { timestamp: string }) => r.timestamp)).toEqual([
      '2026-03-26T23:00:00.000Z',
      '2026-03-27T23:00:00.000Z',
      '2026-03-28T23:00:00.000Z', // 29 March: 23 hours
      '2026-03-29T22:00:00.000Z',
      '2026-03-30T22:00:00.000Z',
    ]);
    const fall = await get('/statistics/daily', { timezone: 'Europe/Berlin', from: '2026-10-24T00:00:00Z', to: '2026-10-26T12:00:00Z' });
    expect(fall.body.results.map((r: { timestamp: string }) => r.timestamp)).toEqual([
      '2026-10-23T22:00:00.000Z',
      '2026-10-24T22:00:00.000Z', // 25 October: 25 hours
      '2026-10-25T23:00:00.000Z',
    ]);
    const day = (ms: number) => localDate('Europe/Berlin', ms);
    expectMatches(spring.body.results, await oracle(day, {}), day);
    expectMatches(fall.body.results, await oracle(day, {}), day);
    // The series adds up to the events of the range: nothing lost at the short and long days.
    expect(spring.body.results[2].transactional.sent + spring.body.results[2].broadcast.sent).toBeGreaterThan(0);
  });

  it.each([
    ['Asia/Kolkata', '18:30', 5],
    ['Asia/Kathmandu', '18:15', 5],
    // Edges after their nearest UTC midnight (taken away from the day records), and +14 hours.
    ['America/New_York', '04:00', 6], // 26 March (local) to 31 March
    ['Pacific/Kiritimati', '10:00', 6], // 27 March (local) to 1 April
  ])('starts the days of %s at %s UTC, from day and quarter-hour counters', async (zone, start, days) => {
    const res = await get('/activity/statistics/daily', { timezone: zone, from: '2026-03-27T00:00:00Z', to: '2026-03-31T12:00:00Z', channelId: s1.channelId, tags: 'news,promo' });
    expect(res.status).toBe(200);
    expect(res.body.results).toHaveLength(days);
    for (const r of res.body.results) expect(r.timestamp.slice(11, 16)).toBe(start);
    const day = (ms: number) => localDate(zone, ms);
    expectMatches(res.body.results, await oracle(day, { channelId: s1.channelId, tags: 'news,promo' }), day);
  });

  it('defaults to the 30 UTC days up to today and answers the same under /activity/statistics', async () => {
    const a = await get('/statistics/daily', {});
    const b = await get('/activity/statistics/daily', {});
    expect(a.body.results).toHaveLength(30);
    expect(a.body.results[29].timestamp).toBe(`${new Date().toISOString().slice(0, 10)}T00:00:00.000Z`);
    expect(b.body).toEqual(a.body);
    const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
    expectMatches(a.body.results, await oracle(day, {}), day);
  });

  it('without from, starts 29 calendar days before the day of to, across a clock change too', async () => {
    // 20 March 00:30 in New York (EDT): 29 days before is 19 February (EST), an hour further back than 29 × 24 hours.
    const spring = await get('/statistics/daily', { timezone: 'America/New_York', to: '2026-03-20T04:30:00Z' });
    expect(spring.body.results).toHaveLength(30);
    expect(spring.body.results[0].timestamp).toBe('2026-02-19T05:00:00.000Z');
    expect(spring.body.results[29].timestamp).toBe('2026-03-20T04:00:00.000Z');
    // 20 November 23:30 in New York (EST): 29 days before is 22 October (EDT), an hour less far back.
    const fall = await get('/statistics/daily', { timezone: 'America/New_York', to: '2026-11-21T04:30:00Z' });
    expect(fall.body.results).toHaveLength(30);
    expect(fall.body.results[0].timestamp).toBe('2026-10-22T04:00:00.000Z');
    const day = (ms: number) => localDate('America/New_York', ms);
    expectMatches(fall.body.results, await oracle(day, {}), day);
  });

  it('answers a full year of days, and refuses 367', async () => {
    const year = await get('/statistics/daily', { from: '2026-01-01T00:00:00Z', to: '2026-12-31T23:00:00Z', timezone: 'America/New_York' });
    expect(year.status).toBe(200);
    expect(year.body.results).toHaveLength(366); // 31 Dec 2025 (New York) to 31 Dec 2026
    const tooLong = await get('/statistics/daily', { from: '2025-01-01T12:00:00Z', to: '2026-01-02T12:00:00Z' });
    expect(tooLong.status).toBe(422);
    expect(Object.keys(tooLong.body.errors)).toEqual(['/from']);
  });
});

describe('GET /statistics/hourly', () => {
  it('gives one UTC hour per point over the range, zeros included, matching the events', async () => {
    const from = new Date(Date.now() - 30 * HOUR).toISOString();
    const to = new Date().toISOString();
    const res = await get('/statistics/hourly', { from, to });
    expect(res.status).toBe(200);
    expect(res.body.results).toHaveLength(31);
    expect(res.body.results[0].timestamp).toBe(new Date(Math.floor(Date.parse(from) / HOUR) * HOUR).toISOString());
    const hour = (ms: number) => String(Math.floor(ms / HOUR));
    expectMatches(res.body.results, await oracle(hour, {}), hour);
    const filtered = await get('/activity/statistics/hourly', { from, to, channelId: s2.channelId, tags: 'welcome' });
    expectMatches(filtered.body.results, await oracle(hour, { channelId: s2.channelId, tags: 'welcome' }), hour);
  });

  it('defaults to the last 24 hours and refuses more than 31 days', async () => {
    expect((await get('/statistics/hourly', {})).body.results).toHaveLength(24);
    expect((await get('/statistics/hourly', { from: '2026-03-01T00:00:00Z', to: '2026-03-31T23:59:00Z' })).body.results).toHaveLength(744);
    const res = await get('/statistics/hourly', { from: '2026-03-01T00:00:00Z', to: '2026-04-01T00:00:00Z' });
    expect(res.status).toBe(422);
    expect(res.body.errors['/from'][0].code).toBe('range_too_long');
  });
});

describe('counting rule', () => {
  it('moves a recipient from delivered to bounced when a bounce follows a delivery, and counts a second bounce never', async () => {
    const at = Date.parse('2026-05-04T10:00:00Z');
    const base = { accountId: t.accountId, channelId: s3.channelId, messageId: randomUUID(), mailType: 'transactional' as const, mailSource: 'api' as const, subject: 's', tags: ['dsn'], metadata: {}, details: {} };
    const ev = (eventType: EventRecord['eventType'], ms: number, recipients: string[]) => ({ ...base, eventType, timestamp: new Date(ms).toISOString(), recipients });
    ledger.add(
      await seedEvents(t.daemon.store, [
        ev('processed', at, ['a@example.net', 'b@example.net']),
        ev('delivered', at + HOUR, ['a@example.net', 'b@example.net']),
        ev('bounced', at + DAY, ['A@example.net']), // an asynchronous DSN the next day
        ev('bounced', at + DAY + HOUR, ['a@example.net']), // the same DSN again
      ]),
    );
    const q = { channelId: s3.channelId, tags: 'dsn' };
    const totals = await get('/statistics/totals', q);
    expect(totals.body.transactional).toEqual({ ...zero(), sent: 2, delivered: 1, bounced: 1 });
    expect((await get('/activity/statistics/totals', q)).body).toEqual(totals.body);
    const hourly = await get('/statistics/hourly', { ...q, from: '2026-05-04T10:00:00Z', to: '2026-05-05T11:00:00Z' });
    const at11 = hourly.body.results.find((r: { timestamp: string }) => r.timestamp === '2026-05-04T11:00:00.000Z');
    expect(at11.transactional.delivered).toBe(1);
    const next = hourly.body.results.find((r: { timestamp: string }) => r.timestamp === '2026-05-05T10:00:00.000Z');
    expect(next.transactional.bounced).toBe(1);
    const sum = hourly.body.results.reduce((n: number, r: { transactional: { bounced: number } }) => n + r.transactional.bounced, 0);
    expect(sum).toBe(1);
  });

  it("answers a series read again from the node's cache, and reads again from an old delivery a later bounce moved", async () => {
    const at = Date.parse('2026-06-08T10:00:00Z');
    const base = { accountId: t.accountId, channelId: s3.channelId, messageId: randomUUID(), mailType: 'transactional' as const, mailSource: 'api' as const, subject: 's', tags: ['cached'], metadata: {}, details: {} };
    const ev = (eventType: EventRecord['eventType'], ms: number) => ({ ...base, eventType, timestamp: new Date(ms).toISOString(), recipients: ['a@example.net'] });
    ledger.add(await seedEvents(t.daemon.store, [ev('processed', at), ev('delivered', at + HOUR)]));
    const q = { channelId: s3.channelId, tags: 'cached', from: '2026-06-08T00:00:00Z', to: '2026-06-09T23:00:00Z' };
    const points = async () => {
      const text = (await t.api('GET', '/metrics')).body as string;
      const of = (from: string) => Number(new RegExp(`^postrider_statistics_series_points_total\\{from="${from}"\\} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);
      return { cache: of('cache'), store: of('store') };
    };
    const first = await get('/statistics/hourly', q);
    expect(first.body.results).toHaveLength(48);
    const before = await points();
    expect((await get('/statistics/hourly', q)).body).toEqual(first.body);
    const after = await points();
    expect(after).toEqual({ cache: before.cache + 48, store: before.store });
    // An asynchronous DSN arriving now bounces the recipient delivered at 11:00 on the 8th.
    ledger.add(await seedEvents(t.daemon.store, [ev('bounced', Date.now())]));
    const third = await get('/statistics/hourly', q);
    const at11 = (r: { body: { results: { timestamp: string; transactional: { delivered: number } }[] } }) => r.body.results.find((p) => p.timestamp === '2026-06-08T11:00:00.000Z')!;
    expect(at11(first).transactional.delivered).toBe(1);
    expect(at11(third).transactional.delivered).toBe(0);
    // The hours before 11:00 on the 8th came from memory, the 37 from 11:00 on from the store.
    expect(await points()).toEqual({ cache: after.cache + 11, store: after.store + 37 });
  });

  it('applies the same rule to the statistics of message details', async () => {
    const sent = await t.api('POST', '/send/transactional', {
      headers: { 'x-service-channel-id': s3.channelId },
      body: { from: { email: `a@${s3.domain}` }, to: [{ email: 'x@example.net' }, { email: 'y@example.net' }], subject: 's', text: 't', tags: ['dsn2'] },
    });
    expect(sent.status).toBe(200);
    // The simulated deliveries are recorded once the message is composed: the DSN comes after them.
    await finishedMessage(t.daemon.store, sent.body.messageId);
    const id = ledger.sent(sent.body.messageId as string);
    const base = { accountId: t.accountId, channelId: s3.channelId, messageId: id, mailType: 'transactional' as const, mailSource: 'api' as const, subject: 's', tags: ['dsn2'], metadata: {}, details: {} };
    const later = new Date(Date.now() + 1000).toISOString();
    await seedEvents(t.daemon.store, [
      { ...base, eventType: 'bounced', timestamp: later, recipients: ['X@example.net'] },
      { ...base, eventType: 'bounced', timestamp: later, recipients: ['x@example.net'] },
    ]);
    const details = await t.api('GET', `/activity/messages/${id}`);
    expect(details.body.statistics).toMatchObject({ delivered: 1, bounced: 1 });
    expect((await get('/statistics/totals', { channelId: s3.channelId, tags: 'dsn2' })).body.transactional).toMatchObject({ sent: 2, delivered: 1, bounced: 1 });
  });
});

describe('access and validation', () => {
  it('keeps accounts apart and limits a channel key to its channel', async () => {
    const range = { from: '2026-03-27T00:00:00Z', to: '2026-03-31T00:00:00Z' };
    expect((await get('/statistics/daily', { ...range, channelId: other.sender.channelId })).status).toBe(403);
    const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
    const theirs = await get('/statistics/daily', range, other.key);
    expect(theirs.body.results.reduce((n: number, r: { transactional: { sent: number }; broadcast: { sent: number } }) => n + r.transactional.sent + r.broadcast.sent, 0)).toBeGreaterThan(0);
    const key = (await t.daemon.store.apiKeys.create({ accountId: t.accountId, channelId: s1.channelId })).token;
    const mine = await get('/statistics/daily', range, key);
    expectMatches(mine.body.results, await oracle(day, {}, s1.channelId), day);
    expect((await get('/statistics/hourly', { channelId: s2.channelId }, key)).status).toBe(403);
  });

  it('answers 401 without a valid key', async () => {
    expect((await get('/statistics/daily', {}, null as unknown as string)).status).toBe(401);
    expect((await get('/activity/statistics/hourly', {}, 'bad')).status).toBe(401);
  });

  it('takes a leap second (RFC 3339 5.7: 23:59:60) as the last millisecond of its minute', async () => {
    const daily = await get('/statistics/daily', { from: '2026-03-27T00:00:00Z', to: '2026-03-30T23:59:60Z' });
    expect(daily.status, JSON.stringify(daily.body)).toBe(200);
    expect(daily.body.results.map((r: { timestamp: string }) => r.timestamp.slice(0, 10))).toEqual(['2026-03-27', '2026-03-28', '2026-03-29', '2026-03-30']);
    const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
    expectMatches(daily.body.results, await oracle(day, {}), day);
    const hourly = await get('/statistics/hourly', { from: '2026-03-28T23:59:60.5Z', to: '2026-03-29T01:00:00Z' });
    expect(hourly.body.results.map((r: { timestamp: string }) => r.timestamp)).toEqual(['2026-03-28T23:00:00.000Z', '2026-03-29T00:00:00.000Z', '2026-03-29T01:00:00.000Z']);
    const leap = await get('/activity/events', { startDate: '2026-03-28T23:59:60Z', limit: '500' });
    const same = await get('/activity/events', { startDate: '2026-03-28T23:59:59.999Z', limit: '500' });
    expect(leap.body.results.length).toBeGreaterThan(0);
    expect(leap.body).toEqual(same.body);
  });

  it('answers 422 on /to, not 500, for a to that is no date-time and no from (the default start needs its day)', async () => {
    for (const to of ['23', 'soon']) {
      const res = await get('/statistics/daily', { to, timezone: 'America/New_York' });
      expect(res.status, JSON.stringify(res.body)).toBe(422);
      expect(Object.keys(res.body.errors)).toEqual(['/to']);
    }
  });

  it('reads an offset written +0100 or +01, as the date-time schema takes them, as +01:00', async () => {
    const want = await get('/statistics/daily', { from: '2026-03-27T01:00:00+01:00', to: '2026-03-30T12:00:00+01:00' });
    expect(want.status, JSON.stringify(want.body)).toBe(200);
    for (const offset of ['+0100', '+01']) {
      const res = await get('/statistics/daily', { from: `2026-03-27T01:00:00${offset}`, to: `2026-03-30T12:00:00${offset}` });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body, offset).toEqual(want.body);
      const events = await get('/activity/events', { startDate: `2026-03-28T23:59:59${offset}`, limit: '500' });
      expect(events.body, offset).toEqual((await get('/activity/events', { startDate: '2026-03-28T22:59:59Z', limit: '500' })).body);
    }
  });

  it('reports every invalid parameter in one 422 with JSON pointers', async () => {
    const res = await get('/statistics/daily', { timezone: 'Mars/Olympus', from: 'soon', channelId: 'x', tags: 'ok,no way', period: 'day' });
    expect(res.status).toBe(422);
    // period is no parameter of these routes: ignored like any unknown one (a cache-buster).
    expect(Object.keys(res.body.errors).sort()).toEqual(['/channelId', '/from', '/tags/1', '/timezone']);
    const range = await get('/statistics/hourly', { from: '2026-03-02T00:00:00Z', to: '2026-03-01T00:00:00Z' });
    expect(Object.keys(range.body.errors)).toEqual(['/to']);
  });
});
