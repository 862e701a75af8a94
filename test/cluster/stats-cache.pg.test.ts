/**
 * The statistics series cache across cluster nodes (statistics/series-cache.ts, domain/stat-changes.ts),
 * with real processes: two `postrider serve` nodes, A and B, each with its own data folder, on one
 * schema of a throw-away PostgreSQL, delivering to one smtp-server sink on 127.0.0.x (the test's
 * own DNS routes the recipient domain there). A change made through A (an asynchronous DSN that
 * bounces a delivered message, a channel's delete) must show in B's next read of a series whose
 * ended points B keeps in memory.
 *
 * Making points end: a node keeps only points that ended more than a minute before its own clock
 * (closedAfterMs), and the points that hold today's deliveries end at the next UTC hour and
 * midnight, too late for a test. Both nodes therefore run under libfaketime (Debian's `faketime`,
 * which .ci/run installs), preloaded into the node processes only, with one offset file read
 * again every second: mail is sent and delivered at "+0" (the real time, PostgreSQL's too), then
 * the file says "+2d" and the test waits until both nodes' Date headers are two days ahead.
 * Every point of the delivery hour and day has then ended for more than a day on both nodes, at
 * any time of day the test runs, and the nodes' clocks stay together, as cluster nodes' clocks
 * are (a writer moves the change marks only for a quarter hour that ended on ITS clock).
 * Monotonic time is left alone (FAKETIME_DONT_FAKE_MONOTONIC), as a real step leaves it; the
 * cluster's shared rows (leases, pacer) are timed by the database's clock, not the nodes'.
 *
 * The series read through B (and A):
 *  - hourly, from the hour before the first event to the hour after the last: every point ended;
 *  - daily, from the day before the deliveries to the day after the nodes' today: ended points
 *    and the running one, where the bounce counts.
 *
 * That B answers ended points from its memory is shown, not assumed: with stat_rollup (the
 * counters both series read) locked ACCESS EXCLUSIVE by the test, B still answers the hourly
 * series and the ended days of the daily one, which only a read that skips the counters can do.
 * So the reads after each change test the cache, not merely the store behind it.
 *
 * Checked: a repeated read through B answers the same numbers; after a DSN received by A's
 * inbound listener bounces a delivered recipient, B's next read has `delivered` one lower in the
 * delivery's hour and day and `bounced` one higher in the bounce's day, and nothing else changed;
 * after a channel's DELETE through A, B's next account-wide read counts none of its mail. Each
 * read through B is a single read after the change committed (waited for through a read that
 * bypasses the cache), never a wait for B to come round; each day point equals a fresh read of
 * that day (GET /statistics/totals, which no cache serves), and A answers as B does.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ActivityEvent, StatCounters, StatPoint, StatSeries, StatTotals } from '../../src/domain/wire.js';
import { ChildDaemon } from '../support/child-daemon.js';
import { clusterNodeEnv } from '../support/cluster-env.js';
import { freePort } from '../support/cli.js';
import type { ApiOptions } from '../support/daemon.js';
import { routeTo } from '../support/delivery-rig.js';
import { startDnsServer, type TestDns } from '../support/dns-server.js';
import { sendToInbound } from '../support/inbound.js';
import { startMxServer, type MxServer, type Received } from '../support/mx-server.js';
import { startPostgres, type PostgresCluster } from '../support/postgres.js';
import { dsn } from '../support/reports.js';
import { setupSender, type Sender } from '../support/sending.js';
import { waitFor } from '../support/wait.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** How far both nodes' clocks are moved on once the mail is delivered. */
const STEP_DAYS = 2;
const SCHEMA = 'stats_cache_test';
const RCPT_DOMAIN = 'stats-inbox.net';
const SINK_ADDRESS = '127.0.38.2';

/** The thread-safe libfaketime of the `faketime` package, wherever the architecture puts it. */
function libfaketime(): string {
  for (const dir of fs.existsSync('/usr/lib') ? fs.readdirSync('/usr/lib') : []) {
    const lib = path.join('/usr/lib', dir, 'faketime', 'libfaketimeMT.so.1');
    if (fs.existsSync(lib)) return lib;
  }
  throw new Error('libfaketime not found (/usr/lib/<arch>/faketime/libfaketimeMT.so.1): install the Debian package `faketime` (apt-get install -y faketime)');
}

/** One message sent in the test: where it went and when its counters count. */
interface Sent {
  id: string;
  recipient: string;
  processedMs: number;
  deliveredMs: number;
  /** The sink's copy: the envelope sender is its per-recipient bounce address. */
  received: Received;
}

let pg: PostgresCluster;
let dns: TestDns;
let sink: MxServer;
let offsetFile: string;
let a: ChildDaemon;
let b: ChildDaemon;
let key: string;
/** Channel 1 keeps its mail; channel 2 is deleted in the last test. */
let ch1: Sender;
let ch2: Sender;
/** ann's and bob's messages go out on channel 1, carl's on channel 2. */
let ann: Sent;
let carl: Sent;
let inboundPort: number;
/** The series' ranges (UTC hour and day starts), fixed once the clocks have moved on. */
let hourFrom: number;
let hourTo: number;
let dayFrom: number;
let dayTo: number;

const api = (node: ChildDaemon, method: string, urlPath: string, o: ApiOptions = {}) => node.api(method, urlPath, { key, ...o });
const iso = (ms: number) => new Date(ms).toISOString();
const floorTo = (ms: number, unit: number) => Math.floor(ms / unit) * unit;

async function get<T>(node: ChildDaemon, urlPath: string, o: ApiOptions = {}): Promise<T> {
  const res = await api(node, 'GET', urlPath, o);
  expect(res.status, `GET ${urlPath}: ${JSON.stringify(res.body)}`).toBe(200);
  return res.body as T;
}

const hourlyPath = () => `/statistics/hourly?from=${iso(hourFrom)}&to=${iso(hourTo)}`;
const dailyPath = (from = dayFrom, to = dayTo) => `/statistics/daily?from=${iso(from)}&to=${iso(to)}`;
const hourly = async (node: ChildDaemon, o?: ApiOptions) => (await get<StatSeries>(node, hourlyPath(), o)).results;
const daily = async (node: ChildDaemon, o?: ApiOptions) => (await get<StatSeries>(node, dailyPath(), o)).results;
/** The daily series' days up to ann's delivery only: all ended a day ago or more, so all kept once read. */
const endedDays = async (node: ChildDaemon, o?: ApiOptions) => (await get<StatSeries>(node, dailyPath(dayFrom, floorTo(ann.deliveredMs, DAY)), o)).results;

/** A read through B while the counters are locked: one that reads them waits for the lock, and is cut short. */
function fromMemory<T>(what: string, read: (signal: AbortSignal) => Promise<T>): Promise<T> {
  return read(AbortSignal.timeout(5_000)).catch((err: Error) => {
    throw new Error(`B did not answer ${what} while stat_rollup was locked (${err.name}: ${err.message}): it read the counters instead of its memory`);
  });
}

/** A fresh read of one UTC day: totals are never served from a cache. */
const dayTotals = (node: ChildDaemon, dayMs: number) => get<StatTotals>(node, `/statistics/totals?from=${iso(dayMs)}&to=${iso(dayMs)}`);

/** Every day point of a daily series equals a fresh read of that day. */
async function expectFreshDays(series: StatPoint[]): Promise<void> {
  for (const p of series) {
    const { transactional, broadcast } = p;
    expect({ transactional, broadcast }, `the day ${p.timestamp}`).toEqual(await dayTotals(a, Date.parse(p.timestamp)));
  }
}

/** `series` with `counter` of transactional mail moved by `by` in the point holding `atMs`. */
function moved(series: StatPoint[], unit: number, changes: Array<{ atMs: number; counter: keyof StatCounters; by: number }>): StatPoint[] {
  const out = structuredClone(series);
  for (const c of changes) {
    const i = out.findIndex((p) => Date.parse(p.timestamp) === floorTo(c.atMs, unit));
    expect(i, `a point holding ${iso(c.atMs)}`).toBeGreaterThanOrEqual(0);
    out[i].transactional[c.counter] += c.by;
  }
  return out;
}

const sum = (series: StatPoint[], counter: keyof StatCounters) => series.reduce((n, p) => n + p.transactional[counter] + p.broadcast[counter], 0);

async function totalsOf(node: ChildDaemon): Promise<StatCounters> {
  return (await get<StatTotals>(node, '/statistics/totals')).transactional;
}

/** Sends one message through `node` on channel `s` to `local`@RCPT_DOMAIN; resolves with its id. */
async function send(node: ChildDaemon, s: Sender, local: string): Promise<string> {
  const res = await api(node, 'POST', '/send/transactional', {
    headers: { 'x-service-channel-id': s.channelId },
    body: { from: { email: `orders@${s.domain}` }, to: [{ email: `${local}@${RCPT_DOMAIN}` }], subject: `Order for ${local}`, text: 'Thanks for your order.' },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.messageId as string;
}

/** The message once delivered: its event times (as A reads them) and the sink's copy. */
async function delivered(id: string, local: string): Promise<Sent> {
  const recipient = `${local}@${RCPT_DOMAIN}`;
  const events = await waitFor(
    async () => {
      const list = (await get<{ results: ActivityEvent[] }>(a, `/activity/events?messageId=${id}`)).results;
      return list.some((e) => e.eventType === 'delivered') && list;
    },
    { what: `the delivered event of ${recipient}`, timeout: 20_000 },
  );
  const at = (type: string) => Date.parse(events.find((e) => e.eventType === type)!.timestamp);
  const received = sink.received.find((r) => r.to.includes(recipient));
  expect(received, `the sink's copy for ${recipient}`).toBeDefined();
  return { id, recipient, processedMs: at('processed'), deliveredMs: at('delivered'), received: received! };
}

/** Moves both nodes' wall clocks to real time + `days`, and waits until both show it. */
async function stepClocks(days: number): Promise<void> {
  fs.writeFileSync(offsetFile, `+${days}d\n`);
  for (const node of [a, b]) {
    await node.whileAlive(
      async () => {
        const res = await fetch(`${node.url}/health`);
        return Date.parse(res.headers.get('date') ?? '') > Date.now() + days * DAY - HOUR;
      },
      { what: `the clock of the node on port ${node.httpPort} to move on ${days} days` },
    );
  }
}

beforeAll(async () => {
  const lib = libfaketime();
  offsetFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-stats-cache-')), 'offset');
  fs.writeFileSync(offsetFile, '+0\n');
  [pg, dns, sink, inboundPort] = await Promise.all([startPostgres(), startDnsServer(), startMxServer({ address: SINK_ADDRESS, starttls: false }), freePort()]);
  routeTo(dns, RCPT_DOMAIN, SINK_ADDRESS);
  const env = {
    ...clusterNodeEnv({ pgUrl: pg.url, schema: SCHEMA, dnsAddress: dns.address, sinkPort: sink.port }),
    LD_PRELOAD: lib,
    FAKETIME_TIMESTAMP_FILE: offsetFile,
    FAKETIME_CACHE_DURATION: '1',
    FAKETIME_DONT_FAKE_MONOTONIC: '1',
  };
  a = new ChildDaemon({ env: { ...env, POSTRIDER_INBOUND_ENABLED: 'true', POSTRIDER_INBOUND_PORT: String(inboundPort) } });
  b = new ChildDaemon({ env });
  // A alone first: it makes the account and writes the initial key into its data folder.
  await a.start();
  key = a.apiKey;
  await b.start();
  [ch1, ch2] = [await setupSender(a, dns, { key }), await setupSender(a, dns, { key })];

  // Real history at the real time: through both nodes, delivered by whichever leases it.
  const ids = [await send(a, ch1, 'ann'), await send(b, ch1, 'bob'), await send(b, ch2, 'carl')];
  const bob = await delivered(ids[1], 'bob');
  [ann, carl] = [await delivered(ids[0], 'ann'), await delivered(ids[2], 'carl')];
  expect(await totalsOf(a)).toMatchObject({ sent: 3, delivered: 3, bounced: 0 });

  await stepClocks(STEP_DAYS);
  const times = [ann, bob, carl].flatMap((m) => [m.processedMs, m.deliveredMs]);
  hourFrom = floorTo(Math.min(...times), HOUR) - HOUR;
  hourTo = floorTo(Math.max(...times), HOUR) + HOUR;
  dayFrom = floorTo(Math.min(...times), DAY) - DAY;
  // The day after the nodes' today: the bounce's day is in the series even if a midnight passes.
  dayTo = floorTo(Date.now() + STEP_DAYS * DAY, DAY) + DAY;
}, 120_000);

afterAll(async () => {
  for (const node of [a, b]) await node?.close().catch(() => undefined);
  await sink?.close();
  await dns?.close();
  await pg?.stop();
  if (offsetFile) fs.rmSync(path.dirname(offsetFile), { recursive: true, force: true });
});

describe('the series cache of two cluster nodes (real processes, one PostgreSQL)', () => {
  let hours: StatPoint[];
  let days: StatPoint[];

  it('answers a repeated read through B with the same numbers, the ended points from its memory', async () => {
    hours = await hourly(b);
    days = await daily(b);
    expect(sum(hours, 'sent')).toBe(3);
    expect(sum(hours, 'delivered')).toBe(3);
    expect(sum(days, 'sent')).toBe(3);
    expect(sum(days, 'delivered')).toBe(3);
    expect(sum(days, 'bounced')).toBe(0);
    await expectFreshDays(days);
    const ended = await endedDays(b);

    // Nothing changed: the same numbers, again and again.
    expect(await hourly(b)).toEqual(hours);
    expect(await daily(b)).toEqual(days);
    expect(await daily(b)).toEqual(days);

    // With the counters locked, only memory can answer: B has the ended points.
    const sql = postgres(pg.url, { max: 1, onnotice: () => undefined });
    try {
      await sql.begin(async (tx) => {
        await tx.unsafe(`LOCK TABLE ${SCHEMA}.stat_rollup IN ACCESS EXCLUSIVE MODE`);
        expect(await fromMemory('the hourly series', (signal) => hourly(b, { signal }))).toEqual(hours);
        expect(await fromMemory('the ended days', (signal) => endedDays(b, { signal }))).toEqual(ended);
      });
    } finally {
      await sql.end();
    }

    // A, whose cache holds them too from now on, answers the same.
    expect(await hourly(a)).toEqual(hours);
    expect(await daily(a)).toEqual(days);
  });

  it("shows at B's next read a bounce that a DSN received by A moved from an old delivery", async () => {
    const verp = ann.received.from;
    const messageIdHeader = /^Message-ID:\s*(<[^>]+>)/im.exec(ann.received.raw.toString('latin1'))?.[1];
    expect(messageIdHeader, 'the Message-ID of the copy the sink received').toBeDefined();
    const reply = await sendToInbound(inboundPort, verp, dsn({ to: verp, recipient: ann.recipient, messageIdHeader: messageIdHeader!, status: '5.1.1', diagnostic: `550 5.1.1 <${ann.recipient}>... User unknown` }));
    expect(reply).toMatch(/^250 /);
    // Committed: a read that no cache serves sees it.
    await waitFor(async () => (await totalsOf(a)).bounced === 1, { what: 'the bounce in the totals' });
    const bounce = (await get<{ results: ActivityEvent[] }>(a, `/activity/events?messageId=${ann.id}&eventTypes=bounced`)).results;
    expect(bounce).toHaveLength(1);
    const bouncedMs = Date.parse(bounce[0].timestamp);
    expect(bouncedMs - ann.deliveredMs).toBeGreaterThan(STEP_DAYS * DAY - HOUR);

    // One read through B, at once: the delivery's hour and day lose it, the bounce's day gains it.
    const hoursAfter = await hourly(b);
    const daysAfter = await daily(b);
    expect(hoursAfter).toEqual(moved(hours, HOUR, [{ atMs: ann.deliveredMs, counter: 'delivered', by: -1 }]));
    expect(daysAfter).toEqual(
      moved(days, DAY, [
        { atMs: ann.deliveredMs, counter: 'delivered', by: -1 },
        { atMs: bouncedMs, counter: 'bounced', by: 1 },
      ]),
    );
    await expectFreshDays(daysAfter);
    expect(await hourly(a)).toEqual(hoursAfter);
    expect(await daily(a)).toEqual(daysAfter);
    [hours, days] = [hoursAfter, daysAfter];
  });

  it("counts none of a channel's mail at B's next account-wide read once the channel is deleted through A", async () => {
    const del = await api(a, 'DELETE', `/channels/${ch2.channelId}`);
    expect(del.status, JSON.stringify(del.body)).toBe(204);

    // One read through B, at once: carl's message (channel 2) is gone from every point.
    const hoursAfter = await hourly(b);
    const daysAfter = await daily(b);
    const carlGone = [
      { atMs: carl.processedMs, counter: 'sent' as const, by: -1 },
      { atMs: carl.deliveredMs, counter: 'delivered' as const, by: -1 },
    ];
    expect(hoursAfter).toEqual(moved(hours, HOUR, carlGone));
    expect(daysAfter).toEqual(moved(days, DAY, carlGone));
    expect(sum(daysAfter, 'sent')).toBe(2);
    expect(sum(daysAfter, 'delivered')).toBe(1); // bob's; ann's bounced
    await expectFreshDays(daysAfter);
    expect(await hourly(a)).toEqual(hoursAfter);
    expect(await daily(a)).toEqual(daysAfter);
  });
});
