/**
 * Message list and statistics series benchmark: fills a temporary LMDB store with messages
 * through the real writer (each message's `accepted` and `processed` events via appendEventInTxn,
 * with every index and counter it maintains; 2% of the messages left queued in messageQueue),
 * spread over one year, then measures p50/p99 of GET /activity/messages pages and counts and of
 * GET /statistics/daily and /hourly series at the store level, without HTTP and JSON: the page
 * walk and the cold count as the LMDB engine's own functions, the whole message request and the
 * series through the store port (store.events.messagePage, store.stats.daySeries/series), the
 * verbs the routes call.
 *
 *   npx tsc -p tsconfig.json && node bench/messages.mjs [messages=1000000] [iterations=100] [pg]
 *   npm run bench -- messages --messages=1000000   (same, written to RESULTS.md)
 *
 * Prints a Markdown section for bench/RESULTS.md.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { LmdbStore } from '../dist/store/lmdb/engine.js';
import { appendEventInTxn, lastEventSeq } from '../dist/store/lmdb/events.js';
import { countEvents, findEvents } from '../dist/store/lmdb/activity-query.js';
import { queueMessageInTxn } from '../dist/store/lmdb/message-query.js';
import { ZoneCalendar } from '../dist/domain/time-zone.js';
import { statisticsDaySeries, statisticsSeries } from '../dist/store/lmdb/stats.js';
import { seriesRows } from './lib/series-rows.mjs';
import { pgSeriesRows } from './lib/series-pg.mjs';

/** The day edges of a zone, as the statistics route computes them (one ZoneCalendar per request). */
const zoneDayEdges = (zone, fromMs, toMs) => ZoneCalendar.of(zone).dayEdges(fromMs, toMs);
import { population, seededRandom } from './lib/fixture.mjs';
import { measure as measureRead, measureAsync } from './lib/measure.mjs';

const TOTAL = Number(process.argv[2] ?? 1_000_000);
const ITER = Number(process.argv[3] ?? 100);
/** `pg` as the third argument: the statistics series on PostgreSQL too (the counters copied there). */
const WITH_PG = process.argv[4] === 'pg';
const SERIES_ITER = 100;
const BATCH = 5_000;
const DAY = 86_400_000;
const HOUR = 3_600_000;

const { rand, pick } = seededRandom(7);
// 5 accounts; the first has 60% of the messages. 10 channels each; 50,000 recipients; 12 tags.
const { accounts, recipients, tags } = population();
const subjects = ['Your receipt', 'Welcome aboard', 'Reset your password', 'Weekly digest', 'Spring promo', 'Security alert'];

function makeMessage(i, startMs, stepMs) {
  const acct = rand() < 0.6 ? accounts[0] : pick(accounts.slice(1));
  const nRcpt = rand() < 0.9 ? 1 : 2 + Math.floor(rand() * 4);
  return {
    accountId: acct.id,
    channelId: pick(acct.channels),
    messageId: randomUUID(),
    mailType: rand() < 0.7 ? 'transactional' : 'broadcast',
    mailSource: rand() < 0.85 ? 'api' : 'smtp',
    timestamp: new Date(Math.round(startMs + i * stepMs)).toISOString(),
    subject: pick(subjects),
    recipients: Array.from({ length: nRcpt }, () => pick(recipients)),
    tags: rand() < 0.7 ? [pick(tags)] : [],
    metadata: {},
    details: {},
  };
}

const measure = (name, fn, iterations = ITER) => measureRead(name, fn, iterations, 3);
const measurePort = (name, fn, iterations = ITER) => measureAsync(name, fn, iterations, 3);

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-bench-messages-'));
const store = new LmdbStore({ dataDir });
await store.start();
try {
  const endMs = Date.now();
  const startMs = endMs - 365 * DAY;
  const stepMs = (365 * DAY) / TOTAL;
  const t0 = performance.now();
  for (let b = 0; b < TOTAL; b += BATCH) {
    const n = Math.min(BATCH, TOTAL - b);
    const drafts = Array.from({ length: n }, (_, k) => makeMessage(b + k, startMs, stepMs));
    await store.write(() => {
      for (const d of drafts) {
        const accepted = appendEventInTxn(store, { ...d, eventType: 'accepted' });
        appendEventInTxn(store, { ...d, eventType: 'processed' });
        if (rand() < 0.02) queueMessageInTxn(store, accepted);
      }
    });
    if ((b / BATCH) % 40 === 0) process.stderr.write(`  ${b.toLocaleString('en')} messages\n`);
  }
  const fillS = (performance.now() - t0) / 1000;
  const last = lastEventSeq(store);
  const main = accounts[0];
  const dbMiB = store.sizeBytes() / 1048576;

  const m = { accountId: main.id, eventTypes: ['accepted'] };
  const q = {
    'no filter, first page': { ...m },
    'channel': { ...m, channelId: main.channels[3] },
    'recipient': { ...m, recipient: recipients[1234] },
    'status=queued': { ...m, messageStatus: 'queued' },
    'status=sent': { ...m, messageStatus: 'sent' },
    'channel + status=queued + tags=vip': { ...m, channelId: main.channels[1], messageStatus: 'queued', tags: ['vip'] },
    'one day (startDate, endDate)': { ...m, startMs: endMs - 100 * DAY, endMs: endMs - 99 * DAY },
  };
  const rows = [];
  for (const [name, f] of Object.entries(q)) {
    rows.push(measure(`message page (limit 100): ${name}`, () => findEvents(store, f, { afterSeq: 0, limit: 100 }).results.length));
  }
  rows.push(measure('message page (limit 500): no filter, deep `after` (90% into the log)', (i) => findEvents(store, q['no filter, first page'], { afterSeq: Math.floor(last * 0.9) + i, limit: 500 }).results.length));
  for (const name of ['no filter, first page', 'channel', 'status=queued', 'one day (startDate, endDate)']) {
    rows.push(measure(`message totalCount, cold: ${name}`, () => {
      const c = countEvents(store, q[name], { from: 1, to: last + 1 });
      return `${c.count}${c.exact ? '' : ' (estimate)'}`;
    }, 20));
  }
  // Through the store port from here on: the verbs GET /activity/messages and /statistics call.
  await store.events.messagePage({ accountId: main.id, messageStatus: 'sent' }, { afterSeq: 0, limit: 100, order: 'asc' });
  rows.push(await measurePort('whole request (page + records + totalCount), status=sent, counts remembered', async (i) => (await store.events.messagePage({ accountId: main.id, messageStatus: 'sent' }, { afterSeq: i * 100, limit: 100, order: 'asc' })).totalCount));

  const series = async (edgesMs, extra = {}, daily = true) => {
    const q = { accountId: main.id, edgesMs, ...extra };
    const points = await (daily ? store.stats.daySeries(q) : store.stats.series(q));
    return `${points.length} points, sent ${points.reduce((n, p) => n + p.transactional.sent + p.broadcast.sent, 0)}`;
  };
  // Issue 36: the year-long daily and 744-hour series, UTC and Kolkata, through the port (the
  // rollup) and the way they were read before it, in this run; 100 runs each for a p99.
  const loadBefore = os.loadavg();
  const before = { daySeries: (q) => statisticsDaySeries(store, q), series: (q) => statisticsSeries(store, q) };
  const seriesArgs = { accountId: main.id, channelId: main.channels[2], endMs, iterations: SERIES_ITER };
  rows.push(...(await seriesRows({ store, before, ...seriesArgs })));
  rows.push(await measurePort('daily, 30 days, Europe/Berlin, all channels', () => series(zoneDayEdges('Europe/Berlin', endMs - 29 * DAY, endMs))));
  const hourEdges = (hours) => Array.from({ length: hours + 1 }, (_, i) => (Math.floor(endMs / HOUR) - hours + 1 + i) * HOUR);
  rows.push(await measurePort('hourly, 24 hours, all channels', () => series(hourEdges(24), {}, false)));
  let pg = null;
  if (WITH_PG) {
    pg = await pgSeriesRows({ lmdbStore: store, ...seriesArgs, progress: (line) => process.stderr.write(`${line}\n`) });
    rows.push(...pg.rows);
  }

  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  const fmt = (r) => `| ${r.name} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${r.iterations} | ${r.info} |`;
  console.log([
    `## Message list and statistics series (bench/messages.mjs)`,
    '',
    `Run ${new Date().toISOString().slice(0, 10)}: ${TOTAL.toLocaleString('en')} messages over 365 days, each an \`accepted\` and a \`processed\` event written through appendEventInTxn ` +
      `in transactions of ${BATCH.toLocaleString('en')} messages (${(TOTAL / fillS).toFixed(0)} messages/s including every index and counter; LMDB file ${dbMiB.toFixed(0)} MiB); 2% left queued. ` +
      '5 accounts (the one queried holds 60%), 10 channels each, 50,000 recipients, 12 tags.',
    `Machine: ${os.cpus().length} × ${cpu}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB RAM, Node ${process.version}, ${os.platform()} ${os.release()}. ` +
      'Store-level timings (what the routes call, without HTTP and JSON), after a warm-up, page cache warm.' +
      ` Load average (1, 5, 15 min) when the series began: ${loadBefore.map((l) => l.toFixed(2)).join(', ')}; after: ${os.loadavg().map((l) => l.toFixed(2)).join(', ')}.` +
      (pg ? ` PostgreSQL rows: the ${pg.copied.toLocaleString('en')} counter records copied by copy-to-postgres's exporter and importer (${pg.copyS.toFixed(0)} s, rollup rebuilt), a local cluster.` : ''),
    '',
    '| query | p50 ms | p99 ms | runs | result |',
    '|---|---|---|---|---|',
    ...rows.map(fmt),
    '',
  ].join('\n'));
} finally {
  await store.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
