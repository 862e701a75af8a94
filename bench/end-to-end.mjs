/**
 * Signed mail end to end (issue 36): messages accepted and DKIM-signed, then relayed to the same
 * local sink (Postfix's smtp-sink on 127.0.0.1:2600), timed from the first request until every
 * message is at the sink, with the CPU time per message of each side from /proc:
 *
 *  - postrider over HTTP: C clients (autocannon) POST /send/transactional to a live channel
 *    with a verified RSA-2048 DKIM domain; delivery on with the rate cap lifted
 *    (delivery.rate=100000, C connections to the MX site), recipients on a few domains whose MX
 *    in the bench DNS server is 127.0.0.1;
 *  - postrider over SMTP submission: the same message through the submission listener
 *    (nodemailer pool of C connections, STARTTLS + AUTH, lib/smtp-load.mjs);
 *  - Postfix + OpenDKIM: ../shared/peers/setup-opendkim.sh on (Debian's OpenDKIM as smtpd's
 *    milter, RSA-2048 relaxed/relaxed, every message signed before its 250), smtp-source with C
 *    sessions to 127.0.0.1:2526, relayed by Postfix to the same sink. The milter is turned off
 *    again at the end, also on an error or Ctrl-C.
 *
 * CPU per message, both sides, from the round's first request until every message is at the
 * sink and its outcome recorded (postrider: its delivered counter; Postfix: its queue empty):
 * postrider is one process (main thread, piscina worker threads, libuv threads: /proc/PID/stat);
 * Postfix is its master and every process it forked (postfixCpuMs: live children plus the reaped
 * ones' cutime/cstime) plus the OpenDKIM daemon. Shown apart: the load generator (this node
 * process's own CPU for the HTTP and SMTP clients; smtp-source, a child this process reaps, for
 * Postfix) and the sink (smtp-sink's process).
 *
 * Rounds alternate (postrider HTTP, postrider SMTP, Postfix, ...), so a load spike from elsewhere
 * hits both sides; the best round of each side is reported and all rounds are listed.
 * --profile=true adds one more postrider HTTP round, not counted, with the daemon under
 * node --cpu-prof: where its main thread and its worker threads spend the end-to-end run.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { cpuMs, selfCpuMs, threadCpuMs, threadDelta } from './lib/cpu.mjs';
import { startDns } from './lib/dns.mjs';
import { composedMessage, FROM, sendPayload } from './lib/message.mjs';
import { deleteQueue, opendkimAvailable, opendkimCpuMs, postfixCpuMs, queued, setOpendkim, smtpSource } from './lib/postfix.mjs';
import { publishSinkDomains, setupSender, startPostrider } from './lib/postrider.mjs';
import { E2E_PARTS, mainProfile, partsOf, WORKER_IDLE, WORKER_PARTS, workerProfiles } from './lib/profile-parts.mjs';
import { fmt, loadavg, ratio, table } from './lib/report.mjs';
import { SINK_PORT, startSink } from './lib/sink.mjs';
import { submissionLoad } from './lib/smtp-load.mjs';

export const meta = {
  name: 'e2e',
  heading: 'Signed mail end to end, HTTP and SMTP submission vs Postfix + OpenDKIM, CPU per message (bench/end-to-end.mjs, issue #36)',
  needsPostfix: true,
  options: { n: 10000, c: 20, domains: 5, rounds: 2, smtp: true, keep: false, warmup: 2000, profile: false },
  usage:
    '--n=10000 messages per round, --c=20 clients (HTTP connections, SMTP connections, smtp-source sessions; also the ' +
    "daemon's connections to the sink), --domains=5 recipient domains (one MX site), --rounds=2 alternating rounds " +
    '(best of each side is reported), --smtp=true (the SMTP submission row), --keep=false (true: smtp-source -d, each ' +
    'session over one connection), --warmup=2000 messages to each side first (after 300, V8 was still compiling the daemon\'s code through the first round), --profile=false (true: one more postrider ' +
    "HTTP round, not counted, under node --cpu-prof: the main thread's and the worker threads' time by part)",
};

const TIMEOUT_MS = 900_000;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
/** CLOCK_MONOTONIC in µs, the clock of a .cpuprofile's timestamps (profile-parts.mjs). */
const monotonicUs = () => Number(process.hrtime.bigint() / 1000n);

const daemonEnv = (dns, c) => ({
  POSTRIDER_DNS_SERVERS: dns.address,
  POSTRIDER_DELIVERY_PORT: String(SINK_PORT),
  POSTRIDER_DELIVERY_RATE: '100000',
  // Every recipient domain has the same MX host: one MX site, C connections like Postfix's 20.
  POSTRIDER_DELIVERY_PER_DOMAIN_CONCURRENCY: String(c),
});

/** C autocannon connections, `n` requests in all; each connection cycles through one body per recipient domain. */
async function httpLoad(p, channelId, { n, c, domains }) {
  const instance = autocannon({
    url: `${p.url}/send/transactional`,
    method: 'POST',
    connections: c,
    amount: n,
    headers: { authorization: `Bearer ${p.apiKey}`, 'content-type': 'application/json', 'x-service-channel-id': channelId },
    requests: domains.map((d) => ({ method: 'POST', body: JSON.stringify(sendPayload({ email: `ann@${d}`, name: 'Ann Example' })) })),
  });
  const r = await instance;
  return { ok: r['2xx'], failed: r.non2xx + r.errors + r.timeouts };
}

/** C pooled submission connections (STARTTLS + AUTH), timed from the first message: no untimed probe. */
async function smtpLoad(p, channelId, { n, c, domains, raw }) {
  const r = await submissionLoad({
    port: p.smtpPort, user: channelId, pass: p.apiKey, count: n, connections: c, raw, from: FROM.email,
    to: (i) => `ann@${domains[i % domains.length]}`, probe: false,
  });
  return { ok: r.sent, failed: r.failed, firstError: r.firstError };
}

/**
 * One round of either side: the load, then until `ok` messages are at the sink (the rate) and
 * their outcomes are recorded (`done`: the CPU window's end). `server()` reads the side's CPU.
 */
async function measured(sink, { load, server, done, generator }) {
  await sleep(300); // the sink's counter line of the last round is read before the reset
  sink.reset();
  const loadAtStart = loadavg();
  const [s0, self0, sink0] = [server(), selfCpuMs(), cpuMs(sink.pid)];
  const from = monotonicUs();
  const t0 = performance.now();
  const sent = await load();
  const tAck = performance.now();
  await sink.waitFor(sent.ok, TIMEOUT_MS);
  const tLast = sink.times[sent.ok - 1];
  await done(sent.ok);
  const [s1, self1, sink1] = [server(), selfCpuMs(), cpuMs(sink.pid)];
  const window = [from, monotonicUs()];
  await sleep(1000);
  const n = sent.ok;
  const per = (a, b) => (a == null || b == null ? null : (b - a) / n);
  return {
    ...sent,
    got: sink.count, // more than ok would be duplicates
    rate: n / ((tLast - t0) / 1000),
    e2eS: (tLast - t0) / 1000,
    ackRate: n / ((tAck - t0) / 1000),
    load: loadAtStart,
    window,
    server: s0 && s1 ? Object.fromEntries(Object.keys(s1).map((k) => [k, per(s0[k], s1[k])])) : null,
    self: per(self0.own, self1.own),
    // The load generator: this process's clients (postrider rounds) or the smtp-source it reaped.
    generator: generator === 'children' ? per(self0.children, self1.children) : per(self0.own, self1.own),
    sink: per(sink0?.total, sink1?.total),
    s0,
    s1,
  };
}

/** Waits until the daemon's delivered counter is `target` (a restarted daemon counts from zero). */
async function deliveredTo(p, target) {
  for (const deadline = Date.now() + TIMEOUT_MS; Date.now() < deadline; await sleep(50)) {
    if ((await p.metric('postrider_messages_delivered_total')) >= target) return;
  }
  throw new Error(`postrider: fewer than ${target} delivered after ${TIMEOUT_MS} ms`);
}

/** Waits until Postfix's queues are empty (every message relayed and its queue file removed). */
async function drained() {
  for (const deadline = Date.now() + TIMEOUT_MS; queued() > 0; await sleep(50)) {
    if (Date.now() > deadline) throw new Error(`postfix: ${queued()} messages still queued after ${TIMEOUT_MS} ms`);
  }
}

/**
 * The daemon's CPU so far: main thread, whole process, its piscina worker threads (the only
 * threads at niceness > 0: src/workers/worker.ts lowers their priority) and the rest (V8's helper
 * threads: garbage collection, compilation; libuv's pool), from /proc/PID/task.
 */
function daemonCpu(pid) {
  const c = cpuMs(pid);
  if (!c) return null;
  let workers = 0;
  try {
    for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
      const line = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const f = line.slice(line.lastIndexOf(') ') + 2).split(' '); // [11] utime, [12] stime, [16] nice
      if (Number(f[16]) > 0) workers += (Number(f[11]) + Number(f[12])) * 10;
    }
  } catch {
    /* a thread ended meanwhile: its time stays in the process's total */
  }
  return { main: c.main, total: c.total, workers, others: c.total - c.main - workers, threads: threadCpuMs(pid) };
}

/** A postrider round over HTTP or SMTP; `via` is httpLoad or smtpLoad. */
async function postriderRound(ctx, via, n) {
  const { p, sink, channelId } = ctx;
  const base = await p.metric('postrider_messages_delivered_total');
  const r = await measured(sink, {
    load: () => via(p, channelId, { ...ctx, n }),
    server: () => daemonCpu(p.pid),
    done: (ok) => deliveredTo(p, base + ok),
    generator: 'self',
  });
  // Every thread but libuv's is named "node" (main, piscina workers, V8's helpers): by thread id.
  r.threads = threadDelta(r.s0?.threads, r.s1?.threads, r.ok, p.pid);
  return r;
}

/** A Postfix + OpenDKIM round: smtp-source to 127.0.0.1:2526, relayed to the sink. */
async function postfixRound(ctx, n) {
  const { sink, c, length, keep } = ctx;
  try {
    return await measured(sink, {
      load: async () => {
        await smtpSource({ sessions: c, count: n, length, keep });
        return { ok: n, failed: 0 };
      },
      server: () => {
        const [postfix, opendkim] = [postfixCpuMs(), opendkimCpuMs()];
        return postfix == null || opendkim == null ? null : { total: postfix + opendkim, postfix, opendkim };
      },
      done: drained,
      generator: 'children',
    });
  } finally {
    await deleteQueue();
  }
}

const describe = (r) =>
  `${fmt(r.rate)} msg/s to the sink (${r.e2eS.toFixed(1)} s; accepted ${fmt(r.ackRate)} msg/s), ${r.ok} ok, ${r.failed} failed` +
  `${r.firstError ? ` (${r.firstError})` : ''}, sink got ${r.got}; CPU ms/message: server ${fmt(r.server?.total, 3)}` +
  (r.server?.main != null ? ` (main thread ${fmt(r.server.main, 3)})` : '') +
  (r.server?.opendkim != null ? ` (OpenDKIM ${fmt(r.server.opendkim, 3)})` : '') +
  `, load generator ${fmt(r.generator, 3)}, sink ${fmt(r.sink, 3)}`;

/** Warm-up of both sides (not counted): connections, caches, JIT, Postfix's processes. */
async function warmUp(ctx, warmup, progress) {
  progress(`warm-up: ${warmup} messages over HTTP${ctx.smtp ? ' and over SMTP' : ''} to postrider, ${warmup} to Postfix + OpenDKIM`);
  await postriderRound(ctx, httpLoad, warmup);
  if (ctx.smtp) await postriderRound(ctx, smtpLoad, warmup);
  const w = await postfixRound(ctx, warmup);
  if (!(w.server?.opendkim > 0)) throw new Error('OpenDKIM used no CPU in the warm-up: is the milter wired into smtpd?');
}

/** `rounds` alternating rounds: postrider HTTP, postrider SMTP, Postfix + OpenDKIM. */
async function alternate(ctx, rounds, progress) {
  const out = { http: [], smtp: [], postfix: [] };
  for (let i = 1; i <= rounds; i++) {
    progress(`round ${i}/${rounds} postrider HTTP: ${ctx.n} POST /send/transactional over ${ctx.c} connections, until all at the sink`);
    out.http.push(await postriderRound(ctx, httpLoad, ctx.n));
    progress(`postrider HTTP: ${describe(out.http.at(-1))}`);
    if (ctx.smtp) {
      progress(`round ${i}/${rounds} postrider SMTP submission: ${ctx.n} messages over ${ctx.c} STARTTLS + AUTH connections, until all at the sink`);
      out.smtp.push(await postriderRound(ctx, smtpLoad, ctx.n));
      progress(`postrider SMTP: ${describe(out.smtp.at(-1))}`);
    }
    progress(`round ${i}/${rounds} Postfix + OpenDKIM: smtp-source -s ${ctx.c} -m ${ctx.n} -l ${ctx.length}${ctx.keep ? ' -d' : ''}, until all at the sink`);
    out.postfix.push(await postfixRound(ctx, ctx.n));
    progress(`Postfix + OpenDKIM: ${describe(out.postfix.at(-1))}`);
  }
  return out;
}

/**
 * --profile: one more HTTP round, not counted (the profiler slows the daemon), with the daemon
 * restarted on the same data under node --cpu-prof; its profiles are written at its exit and
 * read for the round's window only (first request to the last outcome recorded).
 */
async function profiledRound(ctx, progress) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-bench-prof-'));
  const q = await ctx.p.restart(daemonEnv(ctx.dns, ctx.c), { nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${dir}`] });
  ctx.p = q;
  let round;
  try {
    progress(`profiled round: postrider under --cpu-prof, warm-up ${ctx.warmup}, then ${ctx.n} HTTP sends until all at the sink (not counted)`);
    await postriderRound(ctx, httpLoad, ctx.warmup);
    round = await postriderRound(ctx, httpLoad, ctx.n);
    progress(`profiled: ${describe(round)}`);
  } finally {
    await q.stop();
    ctx.p = null;
  }
  try {
    return readProfiles(dir, round);
  } finally {
    if (process.env.BENCH_KEEP_DATA) progress(`CPU profiles kept in ${dir}`);
    else fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** The main thread's and the worker threads' samples of the round, by part, ms per message. */
function readProfiles(dir, round) {
  const windows = [round.window];
  const n = round.ok;
  const main = partsOf(mainProfile(dir), E2E_PARTS, { windows });
  const sum = new Map();
  const frames = new Map();
  let workersMs = 0;
  const workerFiles = workerProfiles(dir);
  for (const f of workerFiles) {
    const w = partsOf(f, WORKER_PARTS, { windows, idle: WORKER_IDLE });
    workersMs += w.totalMs;
    for (const [k, ms] of w.parts) sum.set(k, (sum.get(k) ?? 0) + ms);
    for (const [k, ms] of w.frames) frames.set(k, (frames.get(k) ?? 0) + ms);
  }
  const sorted = (m) => [...m].sort((a, b) => b[1] - a[1]);
  const per = ([k, ms], total) => [k, ms / n, total > 0 ? ms / total : 0];
  return {
    round,
    n,
    windowMs: (round.window[1] - round.window[0]) / 1000,
    main: { totalMs: main.totalMs, parts: main.parts.map((x) => per(x, main.totalMs)), frames: main.frames.slice(0, 12).map((x) => per(x, main.totalMs)) },
    workers: {
      count: workerFiles.length,
      totalMs: workersMs,
      parts: sorted(sum).map((x) => per(x, workersMs)),
      frames: sorted(frames).slice(0, 12).map((x) => per(x, workersMs)),
    },
  };
}

export async function run(o, { progress }) {
  const why = opendkimAvailable();
  if (why) throw new Error(`${why}; the e2e benchmark compares with Postfix + OpenDKIM`);
  const raw = await composedMessage();
  const dns = await startDns();
  const domains = publishSinkDomains(dns, o.domains);
  const sink = await startSink();
  const ctx = { ...o, raw, length: raw.length, dns, domains, sink, p: null, channelId: null };
  let measuredRounds;
  let prof = null;
  try {
    ctx.p = await startPostrider(daemonEnv(dns, o.c));
    ctx.channelId = (await setupSender(ctx.p, dns)).channelId;
    progress('setup-opendkim.sh on: OpenDKIM signs every message Postfix accepts on 127.0.0.1:2526');
    await setOpendkim(true);
    await warmUp(ctx, o.warmup, progress);
    measuredRounds = await alternate(ctx, o.rounds, progress);
    if (o.profile) prof = await profiledRound(ctx, progress);
  } finally {
    await setOpendkim(false).catch((err) => progress(`setup-opendkim.sh off failed: ${err.message}`));
    await ctx.p?.stop();
    await sink.stop();
    await dns.close();
  }
  return report(o, ctx.length, measuredRounds, prof);
}

const bestOf = (rs) => (rs.length ? rs.reduce((a, b) => (b.rate > a.rate ? b : a)) : null);
const ms = (x) => fmt(x, 2);

function rowOf(label, r, peer) {
  return [
    label, fmt(r.rate), ratio(r.rate, peer.rate), r.e2eS.toFixed(1), fmt(r.ackRate),
    ms(r.server?.total), r.server?.main != null ? `${ms(r.server.main)} main thread, ${ms(r.server.workers)} worker threads, ${ms(r.server.others)} other threads` : `${ms(r.server?.postfix)} Postfix, ${ms(r.server?.opendkim)} OpenDKIM`,
    ratio(r.server?.total, peer.server?.total), ms(r.generator), ms(r.sink), `${r.ok} (${r.got})`,
  ];
}

function report(o, length, m, prof) {
  const [h, s, t] = [bestOf(m.http), bestOf(m.smtp), bestOf(m.postfix)];
  const all = (rs, f) => rs.map(f).join(', ');
  const rows = [
    rowOf(`postrider, HTTP POST /send/transactional (autocannon, ${o.c} connections)`, h, t),
    ...(s ? [rowOf(`postrider, SMTP submission (nodemailer pool, ${o.c} STARTTLS + AUTH connections)`, s, t)] : []),
    rowOf(`Postfix + OpenDKIM (smtp-source -s ${o.c}${o.keep ? ' -d' : ''} to 127.0.0.1:2526)`, t, t),
  ];
  const roundsRows = [
    ['all rounds, msg/s (load average at the round\'s start)', ...[m.http, m.smtp, m.postfix].map((rs) => all(rs, (r) => `${fmt(r.rate)} (${r.load.split(', ')[0]})`))],
    ['all rounds, server CPU ms per message', ...[m.http, m.smtp, m.postfix].map((rs) => all(rs, (r) => ms(r.server?.total)))],
  ];
  const threads = h.threads ?? 'n/a';
  const text = [
    `What is compared: ${fmt(o.n)} messages per round, ${o.rounds} alternating round(s) of postrider over HTTP` +
      `${s ? ', postrider over SMTP submission' : ''} and Postfix + OpenDKIM (after a warm-up of ${fmt(o.warmup)} each), each ` +
      `timed from its first request until every message is at the same smtp-sink on 127.0.0.1:${SINK_PORT}; the best round of each side is shown. ` +
      `postrider: a live channel with a verified RSA-2048 DKIM domain, delivery on with delivery.rate=100000 and ${o.c} ` +
      `connections to the one MX site of ${o.domains} recipient domains (MX 127.0.0.1 in the bench DNS server, cached); each ` +
      `message (multipart/alternative, ${fmt(length)} bytes before the signature) is committed before its 200/250, composed and ` +
      'signed in the worker threads after it, then delivered and its outcome committed. Postfix: setup-opendkim.sh on ' +
      `(Debian's OpenDKIM as smtpd's milter, RSA-2048 relaxed/relaxed, signing before the 250), smtp-source with a ${fmt(length)}-byte ` +
      `body, ${o.keep ? 'each session over one connection (-d)' : 'a connection per message'}, relayed to the sink (relayhost, ` +
      'concurrency 20). CPU per message from /proc, from the first request until every outcome is recorded (postrider: its ' +
      "delivered counter; Postfix: its queue empty): postrider's one process, all threads; Postfix's master and every process it " +
      'forked (live ones plus the reaped ones\' cutime/cstime) plus the OpenDKIM daemon. Apart: the load generator (for postrider ' +
      "this benchmark's node process: the HTTP or SMTP clients, and reading the sink's counter; for Postfix smtp-source) and the sink. " +
      '"accepted msg/s": until the last 200/250, with delivery running meanwhile.',
    '',
    table(['end to end, signed', 'msg/s at the sink', 'ratio to Postfix', 's', 'accepted msg/s', 'server CPU ms/msg', 'of which', 'CPU ratio to Postfix', 'load generator CPU ms/msg', 'sink CPU ms/msg', 'messages (sink got)'], rows),
    '',
    table(['', 'postrider HTTP', 'postrider SMTP', 'Postfix + OpenDKIM'], roundsRows),
    '',
    `postrider's threads in the best HTTP round, CPU ms per message, busiest first (/proc/PID/task/TID/stat; every thread is ` +
      '"node": "worker threads" above are the piscina threads, found by their niceness of 10; "other threads" are V8\'s helpers ' +
      `(garbage collection, compilation; the tids right after the pid) and libuv's pool; a thread that ended meanwhile is missing): ${threads}.`,
    ...(prof ? ['', profileText(prof)] : []),
  ].join('\n');
  return { text, reading: reading(h, s, t, prof), summary: summary(o, h, s, t) };
}

function reading(h, s, t, prof) {
  const goal = (ok) => (ok ? 'met' : 'not met');
  const rate = h.rate / t.rate;
  const cpu = h.server && t.server ? h.server.total / t.server.total : NaN;
  return (
    `Signed end to end over HTTP postrider delivered ${fmt(h.rate)} msg/s to the sink, ${ratio(h.rate, t.rate)} Postfix + OpenDKIM's ` +
    `${fmt(t.rate)} msg/s (goal ≥ 3×: ${goal(rate >= 3)}), at ${ms(h.server?.total)} ms of server CPU per message against ` +
    `${ms(t.server?.total)} ms (${ratio(h.server?.total, t.server?.total)}; goal ≤ 0.35×: ${goal(cpu <= 0.35)}), of which OpenDKIM ` +
    `${ms(t.server?.opendkim)} ms. ` +
    (s ? `Over SMTP submission ${fmt(s.rate)} msg/s, ${ratio(s.rate, t.rate)} (goal ≥ 2.5×: ${goal(s.rate / t.rate >= 2.5)}), at ${ms(s.server?.total)} ms per message. ` : '') +
    `The load generators' own CPU (${ms(h.generator)} ms per message for autocannon, ${ms(t.generator)} ms for smtp-source) and the sink's ` +
    'run on the same two cores and are left out of the server columns. ' +
    (prof ? profileReading(prof) : '')
  );
}

function summary(o, h, s, t) {
  return [
    { measure: `signed end to end, HTTP, ${o.c} clients, to smtp-sink (msg/s)`, postrider: fmt(h.rate), postfix: `${fmt(t.rate)} (+ OpenDKIM)`, ratio: ratio(h.rate, t.rate) },
    { measure: 'signed end to end, HTTP: server CPU ms per message', postrider: ms(h.server?.total), postfix: `${ms(t.server?.total)} (+ OpenDKIM)`, ratio: ratio(h.server?.total, t.server?.total) },
    ...(s
      ? [
          { measure: `signed end to end, SMTP submission, ${o.c} connections (msg/s)`, postrider: fmt(s.rate), postfix: `${fmt(t.rate)} (+ OpenDKIM)`, ratio: ratio(s.rate, t.rate) },
          { measure: 'signed end to end, SMTP submission: server CPU ms per message', postrider: ms(s.server?.total), postfix: `${ms(t.server?.total)} (+ OpenDKIM)`, ratio: ratio(s.server?.total, t.server?.total) },
        ]
      : []),
  ];
}

const partRow = ([k, perMsg, share], scale) => [k, fmt(perMsg, 3), `${(share * 100).toFixed(1)}%`, ...(scale ? [fmt(share * scale, 3)] : [])];
const shown = (parts) => parts.filter(([, , share]) => share >= 0.005);

/**
 * A profile's samples are wall-clock intervals: a thread that waits for a core while it has work
 * gets the wait added to its running frame, so on a loaded machine "busy" exceeds its CPU time.
 * The shares hold; the last column puts them on the main thread's CPU time from /proc.
 */
function profileText(p) {
  const r = p.round;
  const mainCpu = r.server?.main;
  return [
    `Profiled HTTP round (node --cpu-prof, not counted above: ${fmt(r.rate)} msg/s, server CPU ${ms(r.server?.total)} ms per message ` +
      `under the profiler, from /proc: main thread ${ms(mainCpu)}, worker threads ${ms(r.server?.workers)}, other threads ${ms(r.server?.others)}), samples from the first request ` +
      `to the last outcome recorded (${fmt(p.windowMs)} ms). Main thread: busy ${fmt(p.main.totalMs)} ms in the samples, ` +
      `${fmt(p.main.totalMs / p.n, 3)} ms per message (samples are wall-clock intervals: on a loaded machine a thread's wait for a core ` +
      "counts in; the last column puts each share on its CPU time from /proc). Each sample goes to the innermost part on its stack, " +
      "ours before the libraries', so the parts add up (parts under 0.5% left out):",
    '',
    table(['main thread, part', 'ms per message (samples)', 'share', 'ms per message (share × /proc)'], shown(p.main.parts).map((x) => partRow(x, mainCpu))),
    '',
    'Its heaviest frames by self time:',
    '',
    table(['part', 'frame', 'ms per message (samples)', 'share'], p.main.frames.map(([k, perMsg, share]) => [...k.split(' | ').map((x) => x.trim() || '(native)'), fmt(perMsg, 3), `${(share * 100).toFixed(1)}%`])),
    '',
    `The ${p.workers.count} worker threads together (piscina's Atomics.wait loop counted as idle): busy ${fmt(p.workers.totalMs)} ms in the ` +
      `samples, ${fmt(p.workers.totalMs / p.n, 3)} ms per message (/proc: ${ms(r.server?.workers)} ms; the last column puts each share on it):`,
    '',
    table(['worker threads, part', 'ms per message (samples)', 'share', 'ms per message (share × /proc)'], shown(p.workers.parts).map((x) => partRow(x, r.server?.workers))),
    '',
    'Their heaviest frames by self time:',
    '',
    table(['part', 'frame', 'ms per message (samples)', 'share'], p.workers.frames.map(([k, perMsg, share]) => [...k.split(' | ').map((x) => x.trim() || '(native)'), fmt(perMsg, 3), `${(share * 100).toFixed(1)}%`])),
  ].join('\n');
}

/** The profile's main findings in a sentence: the heaviest parts of each kind of thread, main thread's on its /proc CPU time. */
function profileReading(p) {
  const mainCpu = p.round.server?.main ?? p.main.totalMs / p.n;
  const top = (parts, k, scale) => parts.slice(0, k).map(([name, perMsg, share]) => `${name} ${fmt(scale ? share * scale : perMsg, 3)} ms (${(share * 100).toFixed(0)}%)`).join('; ');
  const shareOf = (re) => p.main.parts.filter(([k]) => re.test(k)).reduce((a, [, , share]) => a + share, 0);
  const part = (re) => `${fmt(shareOf(re) * mainCpu, 3)} ms (${(shareOf(re) * 100).toFixed(0)}%)`;
  return (
    `In the profiled round the main thread used ${fmt(mainCpu, 3)} ms of CPU per message end to end: intake ${part(/^intake/)}, ` +
    `finishing (hand-off and signed results) ${part(/^finishing/)}, delivery ${part(/^delivery|^nodemailer/)}, garbage collection ` +
    `${part(/^garbage/)}, log lines ${part(/^log lines/)}; heaviest parts: ${top(p.main.parts, 5, mainCpu)}. The worker threads ` +
    `used ${ms(p.round.server?.workers)} ms: ${top(p.workers.parts, 5, p.round.server?.workers)}; the other threads (V8's garbage ` +
    `collection and compiler helpers, libuv's pool) ${ms(p.round.server?.others)} ms, which no part of a profile shows.`
  );
}
