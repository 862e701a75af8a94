/**
 * Cluster mode (issue 32): the same HTTP intake and delivery measured on three setups, in one run:
 *   lmdb-1  one node on LMDB (its data folder), the default;
 *   pg-1    one node on PostgreSQL (store.postgresUrl);
 *   pg-2    two nodes on one PostgreSQL schema; the load generator spreads requests over both
 *           nodes' HTTP ports, and both deliver from the shared queue.
 * Each pg setup has a throw-away PostgreSQL of its own (bench/lib/postgres.mjs: fsync and
 * synchronous_commit on), on the same two cores as the nodes and the load generator.
 *
 * Per setup, in this order:
 *  1. delivery: --n messages queued through the API with delivery off (recipients spread over
 *     --domains sink domains whose MX is 127.0.0.1), every node stopped, then started again with
 *     delivery.rate=100000 (the cap lifted, as bench/delivery.mjs does); msg/s first→last at
 *     smtp-sink (on a free port: no Postfix peer needed);
 *  2. HTTP: the nodes restarted with delivery off; autocannon POSTs /send/transactional to a live
 *     channel (verified RSA-2048 DKIM domain, as bench/http-send.mjs) for --duration seconds with
 *     --c connections spread over the nodes' ports: req/s, p50/p99, and every answer that is not a 200.
 * Delivery runs first so that the HTTP phase's messages, which stay queued, are not delivered in it.
 *
 * During each phase: the nodes' CPU ms per message (/proc, bench/lib/cpu.mjs: the main thread and
 * all threads) and, on PostgreSQL, the CPU ms of the postmaster and all its children (utime +
 * stime of the live ones, plus the postmaster's cutime + cstime, where ended backends go), the
 * WAL written (pg_current_wal_lsn() before and after) and commits (pg_stat_database.xact_commit).
 * The reading estimates from them how many nodes one 16-core PostgreSQL primary carries.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import postgres from 'postgres';
import { onCleanup } from './lib/cleanup.mjs';
import { cpuMs, finished } from './lib/cpu.mjs';
import { startDns } from './lib/dns.mjs';
import { FROM, HTML, SUBJECT, TEXT, sendPayload } from './lib/message.mjs';
import { startPostgres } from './lib/postgres.mjs';
import { freePort, publishSinkDomains, setupSender, startPostrider } from './lib/postrider.mjs';
import { printProfiles } from './lib/profile.mjs';
import { fmt, table } from './lib/report.mjs';
import { arrivalStats, startSink } from './lib/sink.mjs';

const SETUPS = { 'lmdb-1': { pg: false, nodes: 1 }, 'pg-1': { pg: true, nodes: 1 }, 'pg-2': { pg: true, nodes: 2 } };
const SCHEMA = 'bench_cluster';

export const meta = {
  name: 'cluster',
  heading: 'Cluster mode: one node on LMDB, one and two nodes on one PostgreSQL (bench/cluster.mjs, issue #32)',
  needsPostfix: false,
  // n: queueing runs at the HTTP rate over PostgreSQL (about 100 msg/s with the machine busy), so 3,000 keeps a run under 10 minutes.
  options: { duration: 15, c: 20, n: 3000, warmup: 500, domains: 10, 'per-domain': 2, setups: 'lmdb-1,pg-1,pg-2', statements: true, profile: false, socket: true },
  usage:
    '--duration=15 seconds of HTTP load per setup, --c=20 connections (spread over the nodes), ' +
    '--n=3000 messages queued and delivered per setup, --warmup=500 requests before the HTTP load, --domains=10 recipient domains, ' +
    "--per-domain=2 connections per domain (domains × per-domain for the cluster's one MX site), " +
    '--setups=lmdb-1,pg-1,pg-2 (a subset, comma-separated), ' +
    '--statements=true (PostgreSQL with pg_stat_statements: its heaviest statements per phase in the section), ' +
    "--profile=false (true: one more pg-1 HTTP round, not counted, with the node under node --cpu-prof; its threads' heaviest frames on stderr), " +
    '--socket=true (the nodes reach PostgreSQL by its Unix socket; false: by TCP on 127.0.0.1)',
};

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------------------------
// PostgreSQL's side: CPU of the server's processes, WAL position, commits.

const TICK_MS = 1000 / 100; // USER_HZ

/** The fields after the command name of /proc/PID/stat: [1] ppid, [11] utime, [12] stime, [13] cutime, [14] cstime. */
function statFields(pid) {
  const line = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  return line.slice(line.lastIndexOf(') ') + 2).split(' ');
}

/**
 * CPU ms used so far by the cluster's server: the postmaster (its own and that of the children
 * it reaped: backends that ended) and its live children (backends, checkpointer, WAL writer, …).
 */
function postgresCpuMs(cluster) {
  const pm = Number(fs.readFileSync(path.join(cluster.data, 'postmaster.pid'), 'utf8').split('\n')[0]);
  let ticks = 0;
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d) || Number(d) === pm) continue;
    try {
      const f = statFields(d);
      if (Number(f[1]) === pm) ticks += Number(f[11]) + Number(f[12]);
    } catch {
      /* gone meanwhile */
    }
  }
  const f = statFields(pm);
  ticks += Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
  return ticks * TICK_MS;
}

const lsnBytes = (lsn) => {
  const [hi, lo] = lsn.split('/');
  return Number((BigInt(`0x${hi}`) << 32n) + BigInt(`0x${lo}`));
};

/**
 * The server's state now. Backends report their commits to pg_stat_database when they go idle,
 * at most about once a second, so counts over a window are exact only after a pause at both ends.
 */
async function pgSnapshot(db) {
  const [row] = await db`
    SELECT pg_current_wal_lsn()::text AS lsn, d.xact_commit::text AS commits, w.wal_sync::text AS syncs, w.wal_sync_time AS sync_ms
    FROM pg_stat_database d, pg_stat_wal w WHERE d.datname = current_database()`;
  return { at: performance.now(), cpu: postgresCpuMs(db.cluster), wal: lsnBytes(row.lsn), commits: Number(row.commits), syncs: Number(row.syncs), syncMs: Number(row.sync_ms) };
}

/** From snapshot a to b: CPU ms, WAL bytes and commits per message; commits/s over the window. */
function pgDelta(a, b, n) {
  const s = (b.at - a.at) / 1000;
  const syncs = b.syncs - a.syncs;
  return {
    cpuPerMsg: (b.cpu - a.cpu) / n,
    walPerMsg: (b.wal - a.wal) / n,
    commitsPerMsg: (b.commits - a.commits) / n,
    commitsPerS: (b.commits - a.commits) / s,
    cpuShare: (b.cpu - a.cpu) / (s * 1000),
    syncsPerMsg: syncs / n,
    syncMs: syncs > 0 ? (b.syncMs - a.syncMs) / syncs : NaN,
  };
}

/** The bench's own connection, as the superuser over the cluster's unix socket (pg_stat_statements needs it). */
async function connectStats(cluster, statements) {
  const db = postgres({ host: cluster.dir, port: cluster.port, user: 'postgres', database: 'bench', max: 1, onnotice: () => {} });
  db.cluster = cluster;
  if (statements) await db`CREATE EXTENSION IF NOT EXISTS pg_stat_statements`.catch(() => (db.noStatements = true));
  return db;
}

/** --statements: the statements that took the server's time since the last reset, per message. */
async function topStatements(db, n, label, progress) {
  if (!db.statements || db.noStatements) return null;
  const rows = await db`
    SELECT calls::float8 AS calls, total_exec_time AS ms, wal_bytes::float8 AS wal, regexp_replace(query, '\\s+', ' ', 'g') AS query
    FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
    ORDER BY total_exec_time DESC LIMIT 8`;
  const [head] = await db`
    SELECT sum(calls)::float8 AS calls, sum(total_exec_time) AS ms FROM pg_stat_statements
    WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND query LIKE 'UPDATE event_log_head%'`;
  await db`SELECT pg_stat_statements_reset()`;
  const out = rows.map((r) => [fmt(r.ms / n, 3), fmt(r.calls / n, 2), fmt(r.wal / n), `\`${r.query.slice(0, 110).replaceAll('|', '\\|')}${r.query.length > 110 ? '…' : ''}\``]);
  progress(`${label}: heaviest statements (exec ms/msg, calls/msg, WAL B/msg):`);
  for (const r of out) progress(`  ${r[0].padStart(7)} ${r[1].padStart(6)} ${r[2].padStart(6)}  ${r[3]}`);
  return { label, rows: out, head: { callsPerMsg: (head?.calls ?? 0) / n, msPerMsg: (head?.ms ?? 0) / n }, top: rows.slice(0, 3).map((r) => ({ msPerMsg: r.ms / n, callsPerMsg: r.calls / n, query: r.query.slice(0, 90) })), totalMsPerMsg: rows.reduce((a, r) => a + r.ms, 0) / n };
}

async function resetStatements(db) {
  if (db?.statements && !db.noStatements) await db`SELECT pg_stat_statements_reset()`;
}

// ---------------------------------------------------------------------------------------------
// The nodes.

/** Sum of the nodes' CPU ms (main threads, all threads), or null off Linux. */
function nodesCpu(nodes) {
  let main = 0;
  let total = 0;
  for (const p of nodes) {
    const c = cpuMs(p.pid);
    if (!c) return null;
    main += c.main;
    total += c.total;
  }
  return { main, total };
}

/** Stops every node, keeping its data folder, then starts them all at once with env. */
async function restartAll(nodes, env, nodeArgs = []) {
  for (const p of nodes) await p.stop({ keepData: true });
  return startAll(nodes, env, nodeArgs);
}

function startAll(nodes, env, nodeArgs = []) {
  return Promise.all(nodes.map((p) => startPostrider({ ...env, POSTRIDER_HOSTNAME: p.env.POSTRIDER_HOSTNAME }, { dataDir: p.dataDir, apiKey: p.apiKey, nodeArgs })));
}

async function allFinished(nodes) {
  for (const p of nodes) await finished(p);
}

async function sumMetric(nodes, name) {
  return (await Promise.all(nodes.map((p) => p.metric(name)))).reduce((a, b) => a + b, 0);
}

/** Queues `count` messages through the HTTP API, requests round-robin over the nodes, recipients over the sink domains. */
async function queueMessages(nodes, channelId, { count, domains, concurrency }) {
  let next = 0;
  const headers = { authorization: `Bearer ${nodes[0].apiKey}`, 'content-type': 'application/json', 'x-service-channel-id': channelId };
  const worker = async () => {
    while (next < count) {
      const i = next++;
      const body = JSON.stringify({ from: FROM, to: [{ email: `user${i}@${domains[i % domains.length]}` }], subject: SUBJECT, text: TEXT, html: HTML });
      const res = await fetch(`${nodes[i % nodes.length].url}/send/transactional`, { method: 'POST', headers, body });
      if (res.status !== 200) throw new Error(`queueing message ${i} on node ${i % nodes.length}: HTTP ${res.status} ${await res.text()}`);
      await res.arrayBuffer().catch(() => undefined);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

/**
 * autocannon over the nodes' ports (its connections are spread over the URLs). The rate is over
 * the time from the start to the last response; every status other than 200 is counted.
 */
async function cannon(nodes, channelId, { duration, amount, connections }) {
  const t0 = performance.now();
  let last = t0;
  const statuses = {};
  let not200 = 0;
  const instance = autocannon({
    url: nodes.map((p) => `${p.url}/send/transactional`),
    method: 'POST',
    connections,
    ...(amount ? { amount } : { duration }),
    headers: { authorization: `Bearer ${nodes[0].apiKey}`, 'content-type': 'application/json', 'x-service-channel-id': channelId },
    body: JSON.stringify(sendPayload()),
  });
  instance.on('response', (_client, statusCode) => {
    last = performance.now();
    if (statusCode !== 200) {
      not200++;
      statuses[statusCode] = (statuses[statusCode] ?? 0) + 1;
    }
  });
  const r = await instance;
  const seconds = (last - t0) / 1000;
  const ok = r['2xx'] - Object.entries(statuses).filter(([s]) => s.startsWith('2')).reduce((a, [, k]) => a + k, 0);
  return { ok, not200, statuses, errors: r.errors, timeouts: r.timeouts, seconds, rate: ok / seconds, p50: r.latency.p50, p99: r.latency.p99 };
}

// ---------------------------------------------------------------------------------------------
// One setup.

async function runSetup(name, o, ctx) {
  const { dns, sink, domains, progress } = ctx;
  const spec = SETUPS[name];
  const r = { name, nodes: spec.nodes, pg: spec.pg, load: os.loadavg()[0] };
  let cluster = null;
  let db = null;
  let nodes = [];
  const dataDirs = [];
  // An interrupted run (Ctrl-C between a node's stop and its start again) still removes the folders.
  const unregister = onCleanup(() => {
    for (const dir of dataDirs) if (!process.env.BENCH_KEEP_DATA) fs.rmSync(dir, { recursive: true, force: true });
  });
  try {
    if (spec.pg) {
      progress(`${name}: starting a throw-away PostgreSQL (fsync=on, synchronous_commit=on)`);
      // track_wal_io_timing: pg_stat_wal's flush times (the mean WAL flush of each phase).
      cluster = await startPostgres({ conf: `track_wal_io_timing=on\n${o.statements ? "shared_preload_libraries='pg_stat_statements'\n" : ''}` });
      db = await connectStats(cluster, o.statements);
      db.statements = o.statements;
      const [v] = await db`SHOW server_version`;
      r.server = v.server_version;
    }
    // The nodes reach the database on this machine by its Unix socket (postgres.js: ?host=<folder>),
    // as a local client normally does: over loopback TCP each write to PostgreSQL also runs the
    // receiving side of the TCP stack in the node's thread (a quarter of its main thread in the
    // profile). --socket=false measures TCP.
    const storeUrl = spec.pg ? (o.socket ? `${cluster.url}?host=${encodeURIComponent(cluster.dir)}&port=${cluster.port}` : cluster.url) : '';
    const storeEnv = spec.pg ? { POSTRIDER_STORE_POSTGRES_URL: storeUrl, POSTRIDER_STORE_POSTGRES_SCHEMA: SCHEMA } : {};
    const base = { ...storeEnv, POSTRIDER_DNS_SERVERS: dns.address, POSTRIDER_DELIVERY_PORT: String(sink.port) };
    const off = { ...base, POSTRIDER_DELIVERY_ENABLED: 'false' };
    const lifted = { ...base, POSTRIDER_DELIVERY_RATE: '100000', POSTRIDER_DELIVERY_PER_DOMAIN_CONCURRENCY: String(o['per-domain'] * o.domains) };

    // The first node creates the schema and the account; the others join with its API key.
    const first = await startPostrider({ ...off, POSTRIDER_HOSTNAME: 'mta0.postrider.test' });
    nodes.push(first);
    dataDirs.push(first.dataDir);
    for (let i = 1; i < spec.nodes; i++) {
      const p = await startPostrider({ ...off, POSTRIDER_HOSTNAME: `mta${i}.postrider.test` }, { apiKey: first.apiKey });
      nodes.push(p);
      dataDirs.push(p.dataDir);
    }
    const { channelId } = await setupSender(first, dns);
    progress(`${name}: ${nodes.length} node(s) up (HTTP ${nodes.map((p) => p.httpPort).join(', ')})`);

    // 1. Delivery with the cap lifted.
    progress(`${name}: queueing ${fmt(o.n)} messages over ${nodes.length} node(s), ${o.c} at a time (delivery off)`);
    const tq = performance.now();
    await queueMessages(nodes, channelId, { count: o.n, domains, concurrency: o.c });
    r.queueRate = o.n / ((performance.now() - tq) / 1000);
    await allFinished(nodes); // composed and signed: the round measures delivery only
    progress(`${name}: queued at ${fmt(r.queueRate)} msg/s; restarting with delivery.rate=100000, ${o['per-domain'] * o.domains} connections to the one MX site`);
    for (const p of nodes) await p.stop({ keepData: true });
    await sleep(1200);
    await resetStatements(db);
    const pg0 = db && (await pgSnapshot(db));
    sink.reset();
    const t0 = performance.now();
    nodes = await startAll(nodes, lifted);
    const ready = performance.now();
    const cpu0 = nodesCpu(nodes);
    const pg1 = db && (await pgSnapshot(db));
    await sink.waitFor(o.n, 300_000);
    const cpu1 = nodesCpu(nodes);
    const pg2 = db && (await pgSnapshot(db));
    const d = { ...arrivalStats(sink.times.slice(0, o.n)), startS: (ready - t0) / 1000, fromStartS: (sink.times[o.n - 1] - t0) / 1000 };
    // The sink's 250 comes before the outcome's commit: wait for the nodes to have recorded them all.
    for (const deadline = Date.now() + 60_000; (await sumMetric(nodes, 'postrider_messages_delivered_total')) < o.n; ) {
      if (Date.now() > deadline) throw new Error(`${name}: the sink got ${sink.count} messages, the nodes counted ${await sumMetric(nodes, 'postrider_messages_delivered_total')} delivered after 60 s`);
      await sleep(100);
    }
    await sleep(1200);
    const pg3 = db && (await pgSnapshot(db));
    d.got = sink.count;
    d.perNode = await Promise.all(nodes.map((p) => p.metric('postrider_messages_delivered_total')));
    d.cpu = cpu0 && cpu1 ? { main: (cpu1.main - cpu0.main) / o.n, total: (cpu1.total - cpu0.total) / o.n } : null;
    if (db) {
      // Per message: from before the start (the nodes stopped) to all outcomes recorded; commits/s: from /ready to the last arrival.
      d.pg = { ...pgDelta(pg0, pg3, o.n), commitsPerS: pgDelta(pg1, pg2, o.n).commitsPerS, cpuShare: pgDelta(pg1, pg2, o.n).cpuShare };
      d.statements = await topStatements(db, o.n, `${name} delivery`, progress);
    }
    r.delivery = d;
    progress(
      `${name}: delivery ${fmt(d.rate)} msg/s first→last (${d.spanS.toFixed(2)} s), sink got ${d.got}, delivered per node ${d.perNode.join(' / ')}` +
        (d.cpu ? `; nodes' CPU ms/msg main ${fmt(d.cpu.main, 3)}, all ${fmt(d.cpu.total, 3)}` : '') +
        (d.pg ? `; PostgreSQL ${fmt(d.pg.cpuPerMsg, 3)} CPU ms/msg, ${fmt(d.pg.walPerMsg)} WAL B/msg, ${fmt(d.pg.commitsPerMsg, 2)} commits/msg, ${fmt(d.pg.commitsPerS)} commits/s` : ''),
    );

    // 2. HTTP intake, delivery off.
    progress(`${name}: restarting with delivery off; warm-up ${o.warmup} requests`);
    nodes = await restartAll(nodes, off);
    if (o.warmup > 0) await cannon(nodes, channelId, { amount: o.warmup, connections: o.c });
    await allFinished(nodes);
    await sleep(1200);
    if (db) {
      // What the nodes ask of PostgreSQL with nothing to do (heartbeats, lease scans, wake-ups): a baseline for the per-message figures.
      const i0 = await pgSnapshot(db);
      await sleep(4000);
      const i1 = await pgSnapshot(db);
      const s = (i1.at - i0.at) / 1000;
      r.idle = { cpuShare: (i1.cpu - i0.cpu) / (s * 1000), walPerS: (i1.wal - i0.wal) / s, commitsPerS: (i1.commits - i0.commits) / s };
      progress(`${name}: idle: PostgreSQL ${fmt(r.idle.cpuShare * 100, 1)}% of a core, ${fmt(r.idle.walPerS)} WAL B/s, ${fmt(r.idle.commitsPerS, 1)} commits/s`);
    }
    await resetStatements(db);
    const h0 = db && (await pgSnapshot(db));
    const c0 = nodesCpu(nodes);
    progress(`${name}: autocannon ${o.duration} s, ${o.c} connections over ${nodes.length} port(s)`);
    const h = await cannon(nodes, channelId, { duration: o.duration, connections: o.c });
    const cAck = nodesCpu(nodes);
    const h1 = db && (await pgSnapshot(db));
    await allFinished(nodes);
    const c1 = nodesCpu(nodes);
    await sleep(1200);
    const h2 = db && (await pgSnapshot(db));
    const accepted = h.ok + h.not200; // a non-200 may still have been committed; counted in the messages only if 200
    h.cpu = c0 && cAck && c1 && h.ok ? { mainAck: (cAck.main - c0.main) / h.ok, total: (c1.total - c0.total) / h.ok } : null;
    if (db) {
      // Per message: from the start to every message composed and signed (the finishing stage's writes follow the 200);
      // commits/s: over the autocannon window.
      h.pg = { ...pgDelta(h0, h2, h.ok), commitsPerS: pgDelta(h0, h1, accepted).commitsPerS, cpuShare: pgDelta(h0, h1, accepted).cpuShare };
      h.statements = await topStatements(db, h.ok, `${name} HTTP`, progress);
    }
    r.http = h;
    progress(
      `${name}: HTTP ${fmt(h.rate)} req/s, p50 ${h.p50} ms, p99 ${h.p99} ms, ${h.ok} × 200, ${h.not200} other${h.not200 ? ` ${JSON.stringify(h.statuses)}` : ''}, ${h.errors} errors, ${h.timeouts} timeouts` +
        (h.cpu ? `; nodes' CPU ms/msg main ${fmt(h.cpu.mainAck, 3)} (during), all ${fmt(h.cpu.total, 3)} (until signed)` : '') +
        (h.pg ? `; PostgreSQL ${fmt(h.pg.cpuPerMsg, 3)} CPU ms/msg, ${fmt(h.pg.walPerMsg)} WAL B/msg, ${fmt(h.pg.commitsPerMsg, 2)} commits/msg, ${fmt(h.pg.commitsPerS)} commits/s` : ''),
    );

    // --profile: one more HTTP round on pg-1, not counted, with the node's threads under node --cpu-prof.
    if (o.profile && name === 'pg-1') {
      const profDir = fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-bench-prof-'));
      progress(`${name}: profiled HTTP round (not counted), node under --cpu-prof`);
      nodes = await restartAll(nodes, off, ['--cpu-prof', `--cpu-prof-dir=${profDir}`]);
      await cannon(nodes, channelId, { duration: Math.min(o.duration, 10), connections: o.c });
      await allFinished(nodes);
      for (const p of nodes) await p.stop({ keepData: true }); // the profiles are written at exit
      nodes = [];
      printProfiles(profDir, progress);
    }
    r.end = os.loadavg()[0];
  } finally {
    for (const p of nodes) await p.stop();
    for (const dir of dataDirs) if (!process.env.BENCH_KEEP_DATA) fs.rmSync(dir, { recursive: true, force: true });
    unregister();
    await db?.end({ timeout: 5 }).catch(() => undefined);
    cluster?.stop();
  }
  return r;
}

// ---------------------------------------------------------------------------------------------

export async function run(o, { progress }) {
  const names = String(o.setups).split(',').map((s) => s.trim()).filter(Boolean);
  const unknown = names.filter((s) => !SETUPS[s]);
  if (unknown.length) throw new Error(`--setups: unknown ${unknown.join(', ')} (known: ${Object.keys(SETUPS).join(', ')})`);
  const dns = await startDns();
  const domains = publishSinkDomains(dns, o.domains);
  const sink = await startSink({ port: await freePort() }); // a port of its own: a Postfix peer may hold 2600
  const results = {};
  try {
    for (const name of names) results[name] = await runSetup(name, o, { dns, sink, domains, progress });
  } finally {
    await sink.stop();
    await dns.close();
  }
  return report(results, o);
}

// ---------------------------------------------------------------------------------------------
// The section.

/** Assumptions of the estimate (the reading states them). */
const CORES = 16;
const UTILIZATION = 0.7; // of the primary's CPU, leaving the rest to autovacuum, checkpoints, WAL senders and peaks
const WAL_MB_S = 300; // a data-centre NVMe's sustained WAL rate with a flush per group commit (MB/s)
const FLUSH_MS = 0.2; // one WAL flush on such a device (power-loss protection: the flush returns from its cache)
const RTT_MS = 0.2; // a round trip from a node to the primary in the same data centre
const ROUND_TRIPS = 3; // under the event log's lock, after its UPDATE: the pipelined event writes, the message-queue insert, COMMIT

function report(res, o) {
  const list = Object.values(res);
  const lm = res['lmdb-1'];
  const nodeCpu = (h) => (h?.cpu ? `${fmt(h.cpu.mainAck ?? h.cpu.main, 3)} / ${fmt(h.cpu.total, 3)}` : 'n/a');
  const rows = list.map((r) => [
    `${r.name} (${r.nodes} node${r.nodes > 1 ? 's' : ''}, ${r.pg ? 'PostgreSQL' : 'LMDB'})`,
    fmt(r.http.rate),
    lm ? rel(r.http.rate, lm.http.rate) : 'n/a',
    `${r.http.p50} / ${r.http.p99}`,
    `${fmt(r.http.ok)} / ${r.http.not200}${r.http.not200 ? ` (${Object.entries(r.http.statuses).map(([s, k]) => `${k} × ${s}`).join(', ')})` : ''} / ${r.http.errors + r.http.timeouts}`,
    fmt(r.delivery.rate),
    lm ? rel(r.delivery.rate, lm.delivery.rate) : 'n/a',
    `${fmt(r.delivery.got)}${r.nodes > 1 ? ` (${r.delivery.perNode.map((x) => fmt(x)).join(' + ')})` : ''}`,
    nodeCpu(r.http),
    nodeCpu(r.delivery),
    fmt(r.load, 2),
  ]);
  const pgRows = list
    .filter((r) => r.pg)
    .flatMap((r) =>
      [
        ['HTTP intake', r.http],
        ['delivery', r.delivery],
      ].map(([phase, x]) => [
        r.name,
        phase,
        fmt(x.pg.cpuPerMsg, 3),
        `${fmt(x.pg.cpuShare * 100)}%`,
        fmt(x.pg.walPerMsg),
        fmt(x.pg.commitsPerMsg, 2),
        fmt(x.pg.commitsPerS),
        `${fmt(x.pg.syncsPerMsg, 2)} / ${fmt(x.pg.syncMs, 2)}`,
      ]).concat(r.idle ? [[r.name, 'idle, nodes up (4 s, delivery off)', 'n/a', `${fmt(r.idle.cpuShare * 100, 1)}%`, `${fmt(r.idle.walPerS)} per s`, 'n/a', fmt(r.idle.commitsPerS, 1), 'n/a']] : []),
    );
  const statements = list.flatMap((r) => [r.delivery.statements, r.http.statements]).filter(Boolean);
  const server = list.find((r) => r.server)?.server;
  const text = [
    `Three setups, one after the other, each with its own data folders${server ? ` and its own throw-away PostgreSQL ${server} (bench/lib/postgres.mjs: fsync=on, synchronous_commit=on, defaults otherwise; 127.0.0.1)` : ''}, ` +
      'on the same two cores as the nodes, the load generator and the sink. Nodes: `postrider serve` with its defaults ' +
      `(store.poolSize 10), schema \`${SCHEMA}\`, the API rate limit lifted. pg-2: two nodes on one schema, requests spread over both HTTP ports, both delivering from the shared queue.`,
    '',
    `- HTTP: autocannon, ${o.duration} s, ${o.c} connections (spread over the nodes), \`POST /send/transactional\` of one ~2 KB message to a live channel ` +
      `(verified RSA-2048 DKIM domain), delivery off, after ${fmt(o.warmup)} requests of warm-up; req/s counts 200s from the start to the last answer. ` +
      'Each 200 means committed (fsync / synchronous_commit); composition and signature follow in the finishing stage.',
    `- Delivery: ${fmt(o.n)} messages queued through the API with delivery off (${o.domains} recipient domains, one MX site on 127.0.0.1), ` +
      `then every node restarted with delivery.rate=100000 and ${o['per-domain'] * o.domains} connections to the site (for the whole cluster); msg/s first→last at smtp-sink.`,
    '- Nodes\' CPU: /proc, summed over the nodes; HTTP: main thread during the load / all threads until every message is signed; delivery: main / all threads from /ready to the last arrival; ms per message.',
    '- PostgreSQL: CPU of the postmaster and all its children (/proc; ended backends through the postmaster\'s cutime/cstime), WAL bytes (`pg_current_wal_lsn()` before/after), ' +
      'commits (`pg_stat_database.xact_commit`, read-only transactions included), WAL flushes and their mean time (`pg_stat_wal`, track_wal_io_timing=on); per message: HTTP from the start of the load to every message signed, delivery from the nodes\' restart ' +
      'to every outcome recorded (start-up included); CPU share and commits/s: over the load window (autocannon\'s / from /ready to the last arrival; backends report commits about once a second).',
    '',
    table(
      ['setup', 'HTTP req/s', 'vs lmdb-1', 'p50 / p99 ms', '200 / other / errors', 'delivery msg/s', 'vs lmdb-1', 'sink received (per node)', 'nodes\' CPU ms/msg HTTP main / all', 'nodes\' CPU ms/msg delivery main / all', 'load (1 min) at start'],
      rows,
    ),
    ...(pgRows.length
      ? ['', 'PostgreSQL during each phase:', '', table(['setup', 'phase', 'PostgreSQL CPU ms/msg', 'CPU share (of one core) during the load', 'WAL bytes/msg', 'commits/msg', 'commits/s during the load', 'WAL flushes/msg / mean flush ms'], pgRows)]
      : []),
    ...statements.flatMap((s) => ['', `Heaviest statements, ${s.label} (pg_stat_statements: execution time per message, which includes waiting for row locks; calls and WAL bytes per message):`, '', table(['exec ms/msg', 'calls/msg', 'WAL B/msg', 'statement'], s.rows)]),
  ].join('\n');
  return { text, reading: reading(res, o), summary: [] };
}

function reading(res, o) {
  const parts = [];
  const lm = res['lmdb-1'];
  const p1 = res['pg-1'];
  const p2 = res['pg-2'];
  const maxLoad = Math.max(...Object.values(res).flatMap((r) => [r.load, r.end ?? 0]));
  const cores = os.cpus().length;
  if (maxLoad > cores) {
    parts.push(
      `The 1-minute load average reached ${maxLoad.toFixed(1)} on ${cores} cores: the benchmark's own processes (the nodes' threads, PostgreSQL's backends, the load generator, the sink) share them, and other work may have too, so the rates are noisy; the CPU ms per message are the sturdier figures.`,
    );
  }
  if (lm && p1) {
    const h = p1.http.rate / lm.http.rate;
    const d = p1.delivery.rate / lm.delivery.rate;
    const met = h >= 0.5 && d >= 0.5;
    parts.push(
      `Goal (one node on PostgreSQL at least half the LMDB node's rates): HTTP ${(h * 100).toFixed(0)}% (${fmt(p1.http.rate)} against ${fmt(lm.http.rate)} req/s), ` +
        `delivery ${(d * 100).toFixed(0)}% (${fmt(p1.delivery.rate)} against ${fmt(lm.delivery.rate)} msg/s): ${met ? 'met' : h < 0.5 && d < 0.5 ? 'not met for either' : `not met for ${h < 0.5 ? 'HTTP' : 'delivery'}`}.`,
    );
    const cpuOf = (x, r) => (x?.cpu ? x.cpu.total : NaN) + (r?.pg ? x.pg.cpuPerMsg : 0);
    const hTot = cpuOf(p1.http, p1);
    const dTot = cpuOf(p1.delivery, p1);
    const hL = cpuOf(lm.http, lm);
    const dL = cpuOf(lm.delivery, lm);
    if ([hTot, dTot, hL, dL].every(Number.isFinite)) {
      parts.push(
        `On two shared cores the rate follows the CPU a message costs everything on them: HTTP intake ${fmt(hTot, 2)} ms per message on pg-1 (node ${fmt(p1.http.cpu.total, 2)} + PostgreSQL ${fmt(p1.http.pg.cpuPerMsg, 2)}) against ${fmt(hL, 2)} ms on LMDB; ` +
          `delivery ${fmt(dTot, 2)} ms (node ${fmt(p1.delivery.cpu.total, 2)} + PostgreSQL ${fmt(p1.delivery.pg.cpuPerMsg, 2)}) against ${fmt(dL, 2)} ms. ` +
          `PostgreSQL's part is ${fmt(p1.http.pg.commitsPerMsg, 1)} commits and ${fmt(p1.http.pg.walPerMsg / 1024, 1)} KiB of WAL per accepted message, ${fmt(p1.delivery.pg.commitsPerMsg, 1)} commits and ${fmt(p1.delivery.pg.walPerMsg / 1024, 1)} KiB per delivered one` +
          '.' + statementsReading(p1),
      );
    }
  }
  // The estimate: from the PostgreSQL side per message (the worse of pg-1 and pg-2: the second node adds coordination).
  const pgs = [p1, p2].filter(Boolean);
  if (pgs.length) {
    const worst = (f) => Math.max(...pgs.map(f));
    const cpuH = worst((r) => r.http.pg.cpuPerMsg);
    const cpuD = worst((r) => r.delivery.pg.cpuPerMsg);
    const walH = worst((r) => r.http.pg.walPerMsg);
    const walD = worst((r) => r.delivery.pg.walPerMsg);
    const comm = worst((r) => r.http.pg.commitsPerMsg) + worst((r) => r.delivery.pg.commitsPerMsg);
    const budget = CORES * 1000 * UTILIZATION; // CPU ms per second
    const capCpu = budget / (cpuH + cpuD);
    const capWal = (WAL_MB_S * 1e6) / (walH + walD);
    // The event log's one lock (src/store/postgres/event-log.ts): held from an appender's UPDATE of event_log_head to its
    // COMMIT, so its transactions follow one another, whatever the cores and nodes. Counted when pg_stat_statements saw it.
    const ref = p1 ?? p2;
    const headH = ref.http.statements?.head;
    const headD = ref.delivery.statements?.head;
    const lockTxPerMsg = headH && headD ? headH.callsPerMsg + headD.callsPerMsg : NaN;
    const holdMs = FLUSH_MS + ROUND_TRIPS * RTT_MS;
    const capLock = Number.isFinite(lockTxPerMsg) && lockTxPerMsg > 0 ? 1000 / (holdMs * lockTxPerMsg) : Infinity;
    const bounds = [
      ['CPU', capCpu],
      ['WAL bandwidth', capWal],
      ['the event log lock', capLock],
    ].sort((a, b) => a[1] - b[1]);
    const [limit, cap] = bounds[0];
    // One node's rate for messages that are accepted and delivered: measured here (intake and delivery time-share the node,
    // on two cores shared with PostgreSQL) and, as an upper bound, from the node's own CPU per message on two cores of its own.
    const perNode = ref.nodes;
    const nodeMeasured = 1 / (1 / (ref.http.rate / perNode) + 1 / (ref.delivery.rate / perNode));
    const nodeCpuMs = ref.http.cpu && ref.delivery.cpu ? ref.http.cpu.total / perNode + ref.delivery.cpu.total / perNode : NaN;
    const nodeMain = ref.http.cpu && ref.delivery.cpu ? ref.http.cpu.mainAck / perNode + ref.delivery.cpu.main / perNode : NaN;
    const nodeOwn = Math.min(2000 / nodeCpuMs, 1000 / nodeMain);
    const nodes = (c, r) => fmt(Math.max(1, Math.floor(c / r)));
    const lockText = Number.isFinite(capLock)
      ? `The event log's lock: every transaction that appends events (an intake's, ${fmt(headH.callsPerMsg, 2)} per accepted message here; a batch of delivery outcomes', ` +
        `${fmt(headD.callsPerMsg, 2)} per delivered message) updates the one row of event_log_head and holds it until its COMMIT is flushed, so these transactions run one after ` +
        `another in the whole cluster (on ${ref.name} the UPDATE's execution took ${fmt(headH.msPerMsg, 1)} ms per accepted message, nearly all of it waiting for that lock; ` +
        `${fmt(ref.http.pg.syncsPerMsg, 2)} WAL flushes per accepted message of ${fmt(ref.http.pg.syncMs, 2)} ms` +
        (ref.http.pg.syncsPerMsg >= 1 ? ': concurrent sends do not share a flush). ' : '). ') +
        `Held for a flush plus ${ROUND_TRIPS} round trips after the UPDATE (the pipelined event writes, the message-queue insert, COMMIT: src/store/postgres/event-log.ts, submission-commit.ts), ` +
        `with a ${FLUSH_MS} ms flush (NVMe with power-loss protection) and ${RTT_MS} ms round trips (nodes in the same data centre), it is ${fmt(holdMs, 1)} ms: ` +
        `at most ${fmt(1000 / holdMs)} such transactions/s, ${fmt(capLock)} messages accepted and delivered per second, for the whole cluster. `
      : 'The event log lock was not measured (run with --statements=true). ';
    parts.push(
      `Estimate for one PostgreSQL primary of ${CORES} cores. Assumptions: PostgreSQL's CPU per message stays what it is here (the worse of pg-1 and pg-2: ` +
        `${fmt(cpuH, 3)} ms per accepted message, ${fmt(cpuD, 3)} ms per delivered one, on this machine's cores, which a server's cores match roughly), ` +
        `it may use ${UTILIZATION * 100}% of its cores for postrider (the rest for autovacuum, checkpoints, WAL senders to the replica, peaks), ` +
        `and its WAL device sustains ${WAL_MB_S} MB/s (a data-centre NVMe); each message has one recipient, as here. ` +
        `CPU: a message accepted and delivered costs it ${fmt(cpuH + cpuD, 3)} CPU ms, so ${CORES} cores carry ${fmt(capCpu)} msg/s (${fmt(budget / cpuH)} msg/s of intake alone), ` +
        `with ${fmt(comm, 1)} commits per message (${fmt(capCpu * comm)} commits/s) and ${fmt((walH + walD) / 1024, 1)} KiB of WAL (${fmt((capCpu * (walH + walD)) / 1e6)} MB/s). ` +
        `WAL: ${fmt(capWal)} msg/s. ` +
        lockText +
        `So ${limit} is the limit, at about ${fmt(cap)} msg/s. ` +
        `One node accepting and delivering carried ${fmt(nodeMeasured)} msg/s here (${ref.name}: its HTTP and delivery rates time-shared, on two cores shared with PostgreSQL)` +
        (Number.isFinite(nodeOwn)
          ? ` and would carry at most about ${fmt(nodeOwn)} msg/s on two cores of its own (its CPU: ${fmt(nodeCpuMs, 2)} ms per message over all threads, ${fmt(nodeMain, 2)} ms on the main thread)`
          : '') +
        `. One ${CORES}-core primary therefore carries about ${Number.isFinite(nodeOwn) ? `${nodes(cap, nodeOwn)} (nodes of two cores of their own) to ` : ''}${nodes(cap, nodeMeasured)} (nodes as fast as here) nodes ` +
        `at full load before PostgreSQL is the limit` +
        (limit !== 'CPU' ? `; without the lock, its CPU would carry ${Number.isFinite(nodeOwn) ? `${nodes(capCpu, nodeOwn)} to ` : ''}${nodes(capCpu, nodeMeasured)}` : '') +
        `. At the default delivery.rate (50/s for the whole cluster) delivery never comes close.`,
    );
    if (p1 && p2) {
      parts.push(
        `Two nodes on one PostgreSQL (pg-2) against one (pg-1): HTTP ${rel(p2.http.rate, p1.http.rate)}, delivery ${rel(p2.delivery.rate, p1.delivery.rate)}; on two shared cores a second node adds no CPU, so the difference is coordination (and noise), not the gain of a second machine ` +
          `(PostgreSQL CPU per message ${fmt(p2.http.pg.cpuPerMsg, 3)} against ${fmt(p1.http.pg.cpuPerMsg, 3)} ms for intake, ${fmt(p2.delivery.pg.cpuPerMsg, 3)} against ${fmt(p1.delivery.pg.cpuPerMsg, 3)} for delivery).`,
      );
    }
  }
  const bad = Object.values(res).filter((r) => r.http.not200 || r.http.errors || r.http.timeouts || r.delivery.got !== o.n);
  parts.push(
    bad.length
      ? `Not clean: ${bad.map((r) => `${r.name}: ${r.http.not200} non-200 answers ${JSON.stringify(r.http.statuses)}, ${r.http.errors} errors, ${r.http.timeouts} timeouts; sink received ${r.delivery.got} of ${o.n}`).join('; ')}.`
      : `Every HTTP answer was a 200 and every sink received each queued message once (${fmt(o.n)} per setup).`,
  );
  return parts.join('\n\n');
}

/** What pg_stat_statements says of pg-1's intake, in words. */
function statementsReading(r) {
  const st = r.http.statements;
  if (!st) return ' (`--statements=true` lists the statements that cost PostgreSQL most.)';
  const top = st.top.map((t) => `\`${t.query}…\` ${fmt(t.msPerMsg, 3)} ms in ${fmt(t.callsPerMsg, 2)} calls`).join('; ');
  return ` pg_stat_statements' heaviest statements per accepted message on pg-1 (execution time, which includes waiting for row locks): ${top}.`;
}

function rel(x, y) {
  return Number.isFinite(x) && Number.isFinite(y) && y > 0 ? `${(x / y).toFixed(2)}×` : 'n/a';
}
