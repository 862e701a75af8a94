/**
 * Activity and statistics benchmark: fills a temporary LMDB store with events through the real
 * writer (appendEventInTxn, with every index and counter it maintains), then measures p50/p99
 * of typical GET /activity/events and GET /statistics/totals queries at the store level (the
 * code the routes call, without HTTP and JSON).
 *
 *   npx tsc -p tsconfig.json && node bench/activity.mjs [events=1000000] [iterations=200]
 *   npm run bench -- activity --events=1000000 --iterations=200   (same, written to RESULTS.md)
 *
 * Prints a Markdown section for bench/RESULTS.md.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Store } from '../dist/store/lmdb/env.js';
import { appendEventInTxn, lastEventSeq } from '../dist/store/lmdb/events.js';
import { ActivityQueries, countEvents, findEvents } from '../dist/store/lmdb/activity-query.js';
import { statisticsTotals, utcDay } from '../dist/store/lmdb/stats.js';
import { population, seededRandom } from './lib/fixture.mjs';
import { measure as measureRead } from './lib/measure.mjs';

const TOTAL = Number(process.argv[2] ?? 1_000_000);
const ITER = Number(process.argv[3] ?? 200);
const BATCH = 10_000;
const DAY = 86_400_000;

const { rand, pick } = seededRandom(42);
// 5 accounts; the first has 60% of the events. 10 channels each; 50,000 recipients; 12 tags.
const { accounts, recipients, tags } = population();
const subjects = ['Your receipt', 'Welcome aboard', 'Reset your password', 'Weekly digest', 'Spring promo', 'Security alert', 'Invoice available', 'How did we do?'];
/** Event types in the proportions of a typical stream (one accepted + processed per message, outcomes, engagement). */
const typeWheel = [
  ...Array(24).fill('accepted'), ...Array(24).fill('processed'), ...Array(22).fill('delivered'), ...Array(2).fill('bounced'),
  ...Array(18).fill('opened'), ...Array(7).fill('clicked'), 'complained', 'unsubscribed', 'resubscribed',
];

function makeEvent(i, startMs, stepMs) {
  const acct = rand() < 0.6 ? accounts[0] : pick(accounts.slice(1));
  const nRcpt = rand() < 0.9 ? 1 : 2 + Math.floor(rand() * 4);
  const ev = {
    accountId: acct.id,
    channelId: pick(acct.channels),
    messageId: randomUUID(),
    mailType: rand() < 0.7 ? 'transactional' : 'broadcast',
    mailSource: rand() < 0.85 ? 'api' : 'smtp',
    eventType: pick(typeWheel),
    // Monotonic with 2% of events up to 1 minute late.
    timestamp: new Date(Math.round(startMs + i * stepMs - (rand() < 0.02 ? rand() * 60_000 : 0))).toISOString(),
    subject: pick(subjects),
    recipients: Array.from({ length: nRcpt }, () => pick(recipients)),
    tags: rand() < 0.7 ? [pick(tags)] : rand() < 0.5 ? [pick(tags), pick(tags)] : [],
    metadata: { orderId: String(i) },
    details: {},
  };
  return ev;
}

const measure = (name, fn, iterations = ITER) => measureRead(name, fn, iterations, 5);

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-bench-activity-'));
const store = new Store({ dataDir });
await store.start();
try {
  const endMs = Date.now();
  const startMs = endMs - 30 * DAY;
  const stepMs = (30 * DAY) / TOTAL;
  const t0 = performance.now();
  for (let b = 0; b < TOTAL; b += BATCH) {
    const n = Math.min(BATCH, TOTAL - b);
    const drafts = Array.from({ length: n }, (_, k) => makeEvent(b + k, startMs, stepMs));
    await store.write(() => drafts.forEach((d) => appendEventInTxn(store, d)));
  }
  const fillS = (performance.now() - t0) / 1000;
  const last = lastEventSeq(store);
  const main = accounts[0];
  const dbMiB = store.sizeBytes() / 1048576;

  const day = (n) => new Date(endMs - n * DAY).getTime();
  const q = {
    'no filter, first page': { accountId: main.id },
    'channel': { accountId: main.id, channelId: main.channels[3] },
    'recipient': { accountId: main.id, recipient: recipients[1234] },
    'eventTypes=bounced,complained': { accountId: main.id, eventTypes: ['bounced', 'complained'] },
    'channel + eventTypes=opened,clicked + one day': { accountId: main.id, channelId: main.channels[1], eventTypes: ['opened', 'clicked'], startMs: day(10), endMs: day(9) },
    'tags=vip,trial + mailType=broadcast': { accountId: main.id, tags: ['vip', 'trial'], mailType: 'broadcast' },
    'subject substring (not indexed)': { accountId: main.id, subject: 'password' },
    'subject matching nothing (stops at the page budget)': { accountId: main.id, subject: 'no such subject' },
  };

  const rows = [];
  for (const [name, f] of Object.entries(q)) {
    rows.push(measure(`page (limit 100): ${name}`, () => findEvents(store, f, { afterSeq: 0, limit: 100 }).results.length));
  }
  rows.push(measure('page (limit 100): no filter, deep `after` (90% into the log)', (i) => findEvents(store, q['no filter, first page'], { afterSeq: Math.floor(last * 0.9) + i, limit: 100 }).results.length));
  rows.push(measure('page (limit 500): channel, deep `after`', (i) => findEvents(store, q.channel, { afterSeq: Math.floor(last * 0.9) + i, limit: 500 }).results.length));
  const countRows = [];
  for (const [name, f] of Object.entries(q)) {
    countRows.push(measure(`totalCount, cold: ${name.replace('page budget', 'count budget')}`, () => {
      const c = countEvents(store, f, { from: 1, to: last + 1 });
      return `${c.count}${c.exact ? '' : ' (estimate)'}`;
    }, 20));
  }
  const warm = new ActivityQueries(store);
  warm.page(q['no filter, first page'], { afterSeq: 0, limit: 100 });
  countRows.push(measure('whole request (page + totalCount), counts remembered: no filter, next pages', (i) => warm.page(q['no filter, first page'], { afterSeq: i * 100, limit: 100 }).totalCount));

  const statRows = [];
  const from = utcDay(startMs);
  const to = utcDay(endMs);
  statRows.push(measure('statistics, 30 days, all channels', () => statisticsTotals(store, { accountId: main.id, fromDay: from, toDay: to }).transactional.sent));
  statRows.push(measure('statistics, 30 days, one channel', () => statisticsTotals(store, { accountId: main.id, channelIds: [main.channels[2]], fromDay: from, toDay: to }).transactional.sent));
  statRows.push(measure('statistics, 30 days, tags=vip,promo', () => statisticsTotals(store, { accountId: main.id, fromDay: from, toDay: to, tags: ['vip', 'promo'] }).transactional.sent));

  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  const fmt = (r) => `| ${r.name} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${r.iterations} | ${r.info} |`;
  const out = [
    `## Activity and statistics queries (bench/activity.mjs)`,
    '',
    `Run ${new Date().toISOString().slice(0, 10)}: ${TOTAL.toLocaleString('en')} events written through appendEventInTxn in transactions of ${BATCH.toLocaleString('en')} ` +
      `(${(TOTAL / fillS).toFixed(0)} events/s including every index and counter; LMDB file ${dbMiB.toFixed(0)} MiB). ` +
      `5 accounts (the one queried holds 60%), 10 channels each, 50,000 recipients, 12 tags, 30 days, 2% of events up to a minute late.`,
    `Machine: ${os.cpus().length} × ${cpu}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB RAM, Node ${process.version}, ${os.platform()} ${os.release()}. ` +
      'Store-level timings (what the routes call, without HTTP and JSON), after a warm-up, page cache warm.',
    'No peer: Postfix has no activity or statistics query to compare with; the numbers are absolute.',
    '',
    '| query | p50 ms | p99 ms | runs | result |',
    '|---|---|---|---|---|',
    ...rows.map(fmt),
    ...countRows.map(fmt),
    ...statRows.map(fmt),
    '',
  ].join('\n');
  console.log(out);
} finally {
  await store.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
