/**
 * A focused A/B run of the statistics series of issue 36 (the rows of bench/messages.mjs, without
 * its slow fill of every message index): the counters of N messages (the `processed` events of
 * messages.mjs's population, spread over a year) written through countEventInTxn, the writer of
 * every counter and the rollup, into an LMDB store kept in `--dir` between runs; then the
 * year-long daily and 744-hour series in UTC and Asia/Kolkata through this build's rollup read
 * and, with `--compare=DIST` (another build's dist folder, e.g. a copy of the baseline), through
 * that build's, alternating one call of each, so both see the same load. `--pg` copies the
 * counters to a throw-away PostgreSQL cluster (as series-pg.mjs) and does the same there.
 *
 *   npx tsc -p tsconfig.json && node bench/stats-series.mjs --messages=1000000 --dir=/tmp/stats-lmdb [--pg] [--compare=dist-a] [--iterations=200]
 *
 * Prints p50/p99 in ms per series and build (time, and this process's CPU; PostgreSQL's backends'
 * CPU as a mean per call), and checks that both builds answer alike. `--zones=A,B` adds the year of
 * days in those IANA zones. `--hold` keeps the cluster up
 * (its address printed) until SIGUSR2, for EXPLAIN. `--cache` adds the API's read with the node's
 * cache of closed buckets (cachedBuild below); `--only=cached` measures it alone.
 */
import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { LmdbStore } from '../dist/store/lmdb/engine.js';
import { countEventInTxn } from '../dist/store/lmdb/stats.js';
import { ZoneCalendar } from '../dist/domain/time-zone.js';
import { population, seededRandom } from './lib/fixture.mjs';
import { percentile } from './lib/measure.mjs';

const args = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=')).map(([k, v]) => [k, v ?? 'true']));
const TOTAL = Number(args.messages ?? 1_000_000);
const ITER = Number(args.iterations ?? 200);
const DAY = 86_400_000;
const HOUR = 3_600_000;
const dir = path.resolve(args.dir ?? fs.mkdtempSync('/tmp/postrider-stats-series-'));

/** Fills the store once (the population is remembered in the folder, so a later run reads the same data). */
async function filled(store) {
  const saved = path.join(dir, 'population.json');
  if (fs.existsSync(saved)) return JSON.parse(fs.readFileSync(saved, 'utf8'));
  const { rand, pick } = seededRandom(7);
  const { accounts, tags } = population();
  const endMs = Date.now();
  const startMs = endMs - 365 * DAY;
  for (let b = 0; b < TOTAL; b += 5_000) {
    await store.write(() => {
      for (let i = b; i < Math.min(TOTAL, b + 5_000); i++) {
        const acct = rand() < 0.6 ? accounts[0] : pick(accounts.slice(1));
        const nRcpt = rand() < 0.9 ? 1 : 2 + Math.floor(rand() * 4);
        const timeMs = Math.round(startMs + (i * 365 * DAY) / TOTAL);
        const e = { accountId: acct.id, channelId: pick(acct.channels), messageId: randomUUID(), seq: i + 1, mailType: rand() < 0.7 ? 'transactional' : 'broadcast', eventType: 'processed', recipients: Array.from({ length: nRcpt }, (_, k) => `r${k}@example.com`), tags: rand() < 0.7 ? [pick(tags)] : [] };
        countEventInTxn(store, e, timeMs);
      }
    });
  }
  const pop = { accountId: accounts[0].id, channelId: accounts[0].channels[2], endMs };
  fs.writeFileSync(saved, JSON.stringify(pop));
  return pop;
}

function cases({ accountId, channelId, endMs }) {
  const days = (zone) => ZoneCalendar.of(zone).dayEdges(endMs - 365 * DAY, endMs);
  const hours = (offsetMs) => Array.from({ length: 745 }, (_, i) => (Math.floor(endMs / HOUR) - 743 + i) * HOUR + offsetMs);
  return [
    ['daily, UTC', 'd', { accountId, edgesMs: days('UTC') }],
    ['daily, Kolkata', 'd', { accountId, edgesMs: days('Asia/Kolkata') }],
    ['daily, Kolkata, one channel', 'd', { accountId, edgesMs: days('Asia/Kolkata'), channelIds: [channelId] }],
    ['hourly, UTC', 'h', { accountId, edgesMs: hours(0) }],
    ['hourly, Kolkata', 'h', { accountId, edgesMs: hours(HOUR / 2) }],
    ['hourly, UTC, one channel', 'h', { accountId, edgesMs: hours(0), channelIds: [channelId] }],
    // `--zones=America/Los_Angeles,Australia/Sydney`: the year of days in more zones (an edge's
    // finer records lie between it and the nearest UTC midnight: 8 hours for Los Angeles).
    ...(args.zones ? args.zones.split(',').map((zone) => [`daily, ${zone}`, 'd', { accountId, edgesMs: days(zone) }]) : []),
  ];
}

const cpuMs = (u) => (u.user + u.system) / 1000;
/** `--only=cached` (or this, other): measure those builds alone, without the others' garbage in the same process. */
const only = (builds) => (args.only ? builds.filter((b) => args.only.split(',').includes(b.name)) : builds);

/**
 * Alternates one call of each build per iteration and prints p50/p99 of the time and of this
 * process's CPU per build; with `serverMs` (the database server's CPU so far, in 10 ms ticks) its
 * mean per call too.
 */
async function abRows(label, builds, list, serverMs = null) {
  for (const [name, grain, q] of list) {
    const times = builds.map(() => []);
    const cpu = builds.map(() => []);
    const server = builds.map(() => 0);
    const answers = [];
    for (let i = -3; i < ITER; i++) {
      for (let b = 0; b < builds.length; b++) {
        const s0 = serverMs?.() ?? 0;
        const c0 = process.cpuUsage();
        const t0 = process.hrtime.bigint();
        const out = await builds[b].read(q, grain);
        if (i >= 0) times[b].push(Number(process.hrtime.bigint() - t0) / 1e6);
        if (i >= 0) cpu[b].push(cpuMs(process.cpuUsage(c0)));
        if (i >= 0) server[b] += (serverMs?.() ?? 0) - s0;
        else answers[b] = JSON.stringify(out);
      }
    }
    const same = answers.every((a) => a === answers[0]) ? '' : '  ANSWERS DIFFER';
    const cols = builds.map((b, k) => {
      const t = times[k].sort((x, y) => x - y);
      const c = cpu[k].sort((x, y) => x - y);
      const srv = serverMs ? `, server cpu mean ${(server[k] / ITER).toFixed(2)}` : '';
      return `${b.name} p50 ${percentile(t, 50).toFixed(2)} p99 ${percentile(t, 99).toFixed(2)} (cpu ${percentile(c, 50).toFixed(2)}/${percentile(c, 99).toFixed(2)}${srv})`;
    });
    console.log(`${label}${name.padEnd(30)} ${cols.join(' | ')}${same}`);
  }
}

/**
 * `--cache`: the same series through the API's path (statistics/queries.ts) with the node's cache
 * of closed buckets (statistics/series-cache.ts), its clock at the fill's end, so the last bucket
 * of every series is still running and is read from the store at every call, with the change
 * marks, as a dashboard's repeated read does. The first calls (not measured) fill the cache.
 */
async function cachedBuild(engine) {
  const { StatisticsQueries } = await import('../dist/statistics/queries.js');
  const { SeriesCache } = await import('../dist/statistics/series-cache.js');
  const queries = new StatisticsQueries({ store: { stats: engine.stats }, cache: new SeriesCache({ maxBuckets: 50_000, now: () => pop.endMs }) });
  return {
    name: 'cached',
    read: (q, grain) => {
      const { edgesMs, ...scope } = q;
      return grain === 'd' ? queries.daySeries(scope, edgesMs) : queries.hourSeries(scope, edgesMs);
    },
  };
}

const store = new LmdbStore({ dataDir: dir });
await store.start();
const pop = await filled(store);
const list = cases(pop);
const lmdbBuild = async (name, dist) => {
  const m = await import(path.resolve(dist, 'store/lmdb/stats-rollup.js'));
  return { name, read: async (q, grain) => m.rollupSeries(store, q, grain) };
};
const compare = args.compare ? path.resolve(args.compare) : null;
const lmdbBuilds = [await lmdbBuild('this', 'dist'), ...(compare ? [await lmdbBuild('other', compare)] : []), ...(args.cache ? [await cachedBuild(store)] : [])];
if (args.lmdb !== 'false') await abRows('LMDB ', only(lmdbBuilds), list);
if (args.pg) await pgRows();
await store.stop();

/** CPU so far of the postmaster's children (the backends), from /proc, in ms. */
function serverCpuMs(dataDir) {
  const postmaster = fs.readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0].trim();
  let ticks = 0;
  for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
      if (f[1] === postmaster) ticks += Number(f[11]) + Number(f[12]);
    } catch {}
  }
  return ticks * 10;
}

async function pgRows() {
  const { statCounters } = await import('../dist/store/lmdb/export/stats.js');
  const { writeStatCounters } = await import('../dist/store/postgres/import/stats.js');
  const { PostgresStore } = await import('../dist/store/postgres/engine.js');
  const { startPostgres } = await import('./lib/postgres.mjs');
  const cluster = await startPostgres();
  const pg = new PostgresStore({ url: cluster.url, schema: 'postrider', poolSize: 4 });
  try {
    await pg.start();
    const ctx = pg['ctx'];
    let batch = [];
    const flush = async () => { const r = batch; batch = []; await ctx.begin((tx) => writeStatCounters(tx, r)); };
    for (const r of statCounters({ dbs: store['databases'](), nowMs: Date.now(), derived: { engagementMarks: 0 } })) {
      batch.push(r);
      if (batch.length >= 5_000) await flush();
    }
    if (batch.length > 0) await flush();
    await ctx.sql`VACUUM ANALYZE stat_rollup`;
    const pgBuild = async (name, dist) => {
      const m = await import(path.resolve(dist, 'store/postgres/stats-rollup.js'));
      return { name, read: (q, grain) => m.rollupSeries(ctx.sql, q, grain) };
    };
    const builds = [await pgBuild('this', 'dist'), ...(compare ? [await pgBuild('other', compare)] : []), ...(args.cache ? [await cachedBuild(pg)] : [])];
    await abRows('PG   ', only(builds), list, () => serverCpuMs(cluster.data));
    if (args.hold) await new Promise((r) => { console.log(`holding ${cluster.url} (${cluster.dir}); Ctrl-C or kill to end`); process.once('SIGUSR2', r); });
  } finally {
    await pg.stop();
    cluster.stop();
  }
}

