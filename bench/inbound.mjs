/**
 * Inbound mail to an app (issue 33) against the Postfix peer's SMTP intake, in the same run.
 *
 * postrider: the inbound listener with one route (support@ a domain of the account) whose URL is
 * a local HTTP receiver (lib/receiver.mjs: reads each POST, answers 200, counts). smtp-source
 * sends N copies of one realistic message (lib/inbound-mail.mjs: about 8 KB, text + HTML + a
 * PDF, DKIM-signed by a domain with SPF and DMARC in the bench DNS server) over C sessions.
 * Measured: the accept rate (smtp-source's wall time; every 250 means committed), the end-to-end
 * rate (until the receiver has all N, each verified with SPF, DKIM and DMARC, parsed, turned into
 * JSON, signed and POSTed), and the daemon's CPU ms per message (/proc, all threads, from the
 * first connection to the last POST; its main thread's while accepting).
 *
 * Postfix: the same file, the same smtp-source, to 127.0.0.1:2526, relayed to smtp-sink on :2600
 * (its relayhost): the intake rate, the end-to-end rate (until the sink has all N) and the CPU ms
 * per message of every Postfix process (the master and the daemons it forks).
 *
 * Two ways of connecting, alternating rounds of each side in both: a connection per message (as
 * an MX mostly sees mail, and as bench-postfix.sh measures Postfix), then, with --kept, one round
 * each with every session's messages over one connection (smtp-source -d), which shows the
 * intake without the per-connection costs.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cpuMs, cpuPerMessage } from './lib/cpu.mjs';
import { startDns } from './lib/dns.mjs';
import { HELO, inboundMessage, MAIL_FROM } from './lib/inbound-mail.mjs';
import { postfixCpuMs, smtpSource } from './lib/postfix.mjs';
import { expectStatus, freePort, setupSender, startPostrider } from './lib/postrider.mjs';
import { INBOUND_PARTS, mainProfile, partsOf } from './lib/profile-parts.mjs';
import { printProfiles } from './lib/profile.mjs';
import { startReceiver } from './lib/receiver.mjs';
import { fmt, ratio, table } from './lib/report.mjs';
import { startSink } from './lib/sink.mjs';

export const meta = {
  name: 'inbound',
  heading: 'Inbound mail: accepted and posted to an app vs Postfix SMTP intake (bench/inbound.mjs, issue #33)',
  needsPostfix: true,
  options: { n: 10000, c: 20, rounds: 2, kept: true, warmup: 300, profile: false },
  usage:
    '--n=10000 messages per round, --c=20 smtp-source sessions for both servers, --rounds=2 alternating rounds with a ' +
    'connection per message (best of each side is reported), --kept=true (then one round each with kept connections, ' +
    'smtp-source -d), --warmup=300 messages to each before the rounds, --profile=false (true: one more postrider round, ' +
    "not counted, under node --cpu-prof: its threads' heaviest frames on stderr, the main thread's parts in the section)",
};

const ROUTE_DOMAIN = 'inbound-bench-postrider.com';
const ROUTE_ADDRESS = `support@${ROUTE_DOMAIN}`;
const POSTED_TIMEOUT_MS = 900_000;

/** CLOCK_MONOTONIC in µs, the clock of a .cpuprofile's timestamps (profile-parts.mjs). */
const monotonicUs = () => Number(process.hrtime.bigint() / 1000n);

/** One round to postrider: smtp-source until every 250, then until the receiver has every POST. */
async function postriderRound(p, receiver, { n, c, file, keep }) {
  receiver.reset();
  const cpu0 = cpuMs(p.pid);
  const from = monotonicUs();
  const t0 = performance.now();
  await smtpSource({ sessions: c, count: n, file, keep, helo: HELO, from: MAIL_FROM, to: ROUTE_ADDRESS, port: p.inboundPort });
  const tAck = performance.now();
  const cpuAck = cpuMs(p.pid);
  await receiver.waitFor(n, POSTED_TIMEOUT_MS);
  const t1 = performance.now();
  const window = [from, monotonicUs()];
  const cpu = cpuPerMessage(cpu0, cpuAck, cpuMs(p.pid), n);
  const ackS = (tAck - t0) / 1000;
  const e2eS = (t1 - t0) / 1000;
  // The main thread's share of the accepting window: how close intake came to one core.
  const mainBusy = cpu ? (cpu.mainAck * n) / (ackS * 1000) : null;
  return { rate: n / ackS, ackS, e2eS, e2eRate: n / e2eS, cpu: cpu && { ...cpu, mainBusy }, window, posts: receiver.posts, postBytes: receiver.bytes / Math.max(1, receiver.posts) };
}

/** One round to Postfix: smtp-source until every 250, then until the sink has every message. */
async function postfixRound(sink, { n, c, file, keep }) {
  sink.reset();
  const cpu0 = postfixCpuMs();
  const t0 = performance.now();
  await smtpSource({ sessions: c, count: n, file, keep, helo: HELO, from: MAIL_FROM, to: ROUTE_ADDRESS });
  const tAck = performance.now();
  await sink.waitFor(n, POSTED_TIMEOUT_MS);
  const t1 = performance.now();
  const cpu1 = postfixCpuMs();
  const ackS = (tAck - t0) / 1000;
  const e2eS = (t1 - t0) / 1000;
  return { rate: n / ackS, ackS, e2eS, e2eRate: n / e2eS, cpu: cpu0 === null || cpu1 === null ? null : { total: (cpu1 - cpu0) / n } };
}

/** The daemon's settings: its inbound listener on `inboundPort`, POSTs to loopback http:// allowed, the bench DNS server. */
function inboundEnv(dns, inboundPort) {
  return {
    POSTRIDER_DNS_SERVERS: dns.address,
    POSTRIDER_DELIVERY_ENABLED: 'false',
    POSTRIDER_INBOUND_ENABLED: 'true',
    POSTRIDER_INBOUND_PORT: String(inboundPort),
    // Every session comes from 127.0.0.1; Postfix exempts its own networks from its limits too.
    POSTRIDER_INBOUND_MAX_CONNECTIONS_PER_ADDRESS: '1000',
    POSTRIDER_WEBHOOKS_ALLOW_HTTP: 'true',
    POSTRIDER_WEBHOOKS_ALLOW_PRIVATE: 'true',
  };
}

/** The daemon, a live channel with a verified domain, and its route to the receiver. */
async function startInbound(dns, receiver) {
  const inboundPort = await freePort();
  const p = await startPostrider(inboundEnv(dns, inboundPort));
  p.inboundPort = inboundPort;
  const { channelId } = await setupSender(p, dns, { domain: ROUTE_DOMAIN });
  expectStatus(await p.api('POST', '/inbound/routes', { channelId, address: ROUTE_ADDRESS, url: receiver.url }), 200, 'POST /inbound/routes');
  return p;
}

/** What the app got for the first message: the verdicts and the attachment (the run stops unless all pass). */
function firstPayload(receiver) {
  const j = receiver.firstJson();
  if (!j) throw new Error('the receiver got no POST');
  const dkim = j.auth.dkim.map((d) => `${d.result} (${d.domain})`).join(', ') || 'none';
  const verdicts = `SPF ${j.auth.spf.result}, DKIM ${dkim}, DMARC ${j.auth.dmarc.result}`;
  if (j.auth.spf.result !== 'pass' || !j.auth.dkim.some((d) => d.result === 'pass') || j.auth.dmarc.result !== 'pass') {
    throw new Error(`the benchmark message should pass SPF, DKIM and DMARC: ${verdicts}`);
  }
  const att = j.attachments.map((a) => `${a.filename} (${a.contentType}, ${fmt(a.size)} bytes${a.content ? ', inlined' : ''})`).join(', ');
  return { verdicts, attachments: att };
}

const cpuNote = (r) => (r.cpu ? `CPU ms/message ${fmt(r.cpu.total, 2)}` : 'CPU n/a');

/** `rounds` alternating rounds, postrider then Postfix, so a load spike from elsewhere hits both sides rather than one. */
async function alternate({ p, receiver, sink, job, rounds, progress }) {
  const ours = [];
  const theirs = [];
  const how = job.keep ? 'kept connections (-d)' : 'a connection per message';
  for (let r = 1; r <= rounds; r++) {
    progress(`round ${r}/${rounds} postrider, ${how}: smtp-source -s ${job.c} -m ${job.n} -F message to the inbound listener, until ${job.n} POSTs`);
    const o = await postriderRound(p, receiver, job);
    ours.push(o);
    progress(`postrider: accepted ${fmt(o.rate)} msg/s (${o.ackS.toFixed(1)} s), posted ${fmt(o.e2eRate)} msg/s (${o.e2eS.toFixed(1)} s), ` +
      `${o.posts} POSTs; ${cpuNote(o)}${o.cpu ? `, main thread ${fmt(o.cpu.mainAck, 2)} ms/message, ${(o.cpu.mainBusy * 100).toFixed(0)}% busy while accepting` : ''}`);
    progress(`round ${r}/${rounds} Postfix, ${how}: the same to 127.0.0.1:2526, relayed to smtp-sink`);
    const t = await postfixRound(sink, job);
    theirs.push(t);
    progress(`Postfix: accepted ${fmt(t.rate)} msg/s (${t.ackS.toFixed(1)} s), at the sink ${fmt(t.e2eRate)} msg/s (${t.e2eS.toFixed(1)} s); ${cpuNote(t)}`);
  }
  return { ours, theirs };
}

/**
 * --profile: one more postrider round, not counted (the profiler slows the daemon), with the
 * daemon restarted on the same data under node --cpu-prof; its profiles are written at its exit,
 * and the main thread's samples of that round (first connection to last POST) are read.
 */
async function profiledRound(p, receiver, job, { warmup, progress }) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-bench-prof-'));
  const port = p.inboundPort;
  const q = await p.restart(inboundEnv(job.dns, port), { nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${dir}`] });
  q.inboundPort = port;
  let round;
  try {
    progress(`profile round: postrider under --cpu-prof, warm-up ${warmup}, then ${job.n} messages, a connection per message (not counted)`);
    await postriderRound(q, receiver, { ...job, n: warmup });
    round = await postriderRound(q, receiver, job);
    progress(`profiled: accepted ${fmt(round.rate)} msg/s, posted ${fmt(round.e2eRate)} msg/s`);
  } finally {
    await q.stop();
  }
  const parts = { ...profileParts(dir, [round], job.n), round };
  printProfiles(dir, progress);
  return parts;
}

/** The main thread's time in the rounds' windows, by part of the work and by frame, ms per message. */
function profileParts(dir, rounds, n) {
  const windows = rounds.map((r) => r.window);
  const { totalMs, parts, frames } = partsOf(mainProfile(dir), INBOUND_PARTS, { windows });
  const messages = n * rounds.length;
  const windowMs = windows.reduce((a, [from, to]) => a + (to - from) / 1000, 0);
  const per = ([k, ms]) => [k, ms / messages, ms / totalMs];
  return { totalMs, windowMs, messages, perMessage: totalMs / messages, parts: parts.map(per), frames: frames.slice(0, 15).map(per) };
}

export async function run(opts, { progress }) {
  const { n, c, rounds, kept, warmup, profile } = opts;
  const dns = await startDns();
  const receiver = await startReceiver();
  const sink = await startSink();
  const message = await inboundMessage(dns, { to: ROUTE_ADDRESS });
  let p;
  try {
    p = await startInbound(dns, receiver);
    const job = { c, n, file: message.file, dns, keep: false };
    progress(`postrider up (inbound ${p.inboundPort}); ${fmt(message.raw.length)}-byte message; warm-up ${warmup} messages to each server`);
    await postriderRound(p, receiver, { ...job, n: warmup });
    const first = firstPayload(receiver);
    progress(`the app got: ${first.verdicts}; ${first.attachments}`);
    await postfixRound(sink, { ...job, n: warmup });
    const perConnection = await alternate({ p, receiver, sink, job, rounds, progress });
    const keptRounds = kept ? await alternate({ p, receiver, sink, job: { ...job, keep: true }, rounds: 1, progress }) : null;
    const failed = await p.api('GET', '/inbound/messages?status=failed&limit=1');
    if (failed.body?.results?.length) throw new Error(`inbound messages ended failed: ${JSON.stringify(failed.body.results[0].attempts)}`);
    let parts = null;
    if (profile) {
      parts = await profiledRound(p, receiver, job, { warmup, progress });
      p = null; // stopped with its restart
    }
    return report({ ...opts, length: message.raw.length, first, perConnection, keptRounds, parts });
  } finally {
    await p?.stop();
    await sink.stop();
    await receiver.close();
    await dns.close();
    message.remove();
  }
}

const bestOf = (rs, key) => rs.reduce((a, b) => (b[key] > a[key] ? b : a));
const cpuCell = (r) => (r.cpu ? fmt(r.cpu.total, 2) : 'n/a');
const all = (rs, f) => rs.map(f).join(', ');

/** The rows of one way of connecting: accepted, end to end, CPU per message. */
function rowsOf(label, { ours, theirs }) {
  const [oa, ta] = [bestOf(ours, 'rate'), bestOf(theirs, 'rate')];
  const [oe, te] = [bestOf(ours, 'e2eRate'), bestOf(theirs, 'e2eRate')];
  const rounds = (f) => `${all(ours, f)} / ${all(theirs, f)}`;
  return [
    [`${label}: accepted msg/s (250: committed / queued)`, fmt(oa.rate), fmt(ta.rate), ratio(oa.rate, ta.rate), rounds((r) => fmt(r.rate))],
    [`${label}: end to end msg/s (posted to the app / relayed to smtp-sink)`, fmt(oe.e2eRate), fmt(te.e2eRate), ratio(oe.e2eRate, te.e2eRate), rounds((r) => fmt(r.e2eRate))],
    [`${label}: CPU ms per message, to the end (all threads / all Postfix processes)`, cpuCell(oe), cpuCell(te), ratio(oe.cpu?.total, te.cpu?.total), rounds(cpuCell)],
    [`${label}: postrider's main thread while accepting, ms per message and share of the time`, oa.cpu ? `${fmt(oa.cpu.mainAck, 2)}, ${(oa.cpu.mainBusy * 100).toFixed(0)}%` : 'n/a', '', '', all(ours, (r) => (r.cpu ? `${fmt(r.cpu.mainAck, 2)}, ${(r.cpu.mainBusy * 100).toFixed(0)}%` : 'n/a'))],
  ];
}

function report({ n, c, rounds, length, first, perConnection, keptRounds, parts }) {
  const text = [
    `What is compared: the same ${fmt(length)}-byte message to both servers, ${fmt(n)} per round, from smtp-source with ${c} sessions ` +
      `and no TLS: ${rounds} alternating round(s) with a connection per message (as an MX mostly receives mail)` +
      (keptRounds ? ', then one round each with each session\'s messages over one connection (smtp-source -d)' : '') +
      ". The message: a customer's reply to a receipt (multipart/mixed, text with a quoted part, HTML, a 2.7 KB PDF, two Received " +
      'fields), DKIM-signed with RSA-2048 by its From domain, which publishes SPF for 127.0.0.1 and a p=reject DMARC policy in the ' +
      `bench DNS server; the app got: ${first.verdicts}; attachments ${first.attachments}. postrider: the inbound listener with one ` +
      'route (support@) to a node:http receiver on loopback that reads each POST and answers 200; delivery disabled; its DNS the ' +
      "bench's dns2 server. A 250 means the raw message and its envelope are committed (fsync); after it each message is verified " +
      '(mailauth: SPF, DKIM with its key lookup, DMARC, ARC), parsed (mailparser), turned into JSON and POSTed signed (t=…,v1=…) ' +
      'from the durable outbox. Postfix: the same smtp-source to 127.0.0.1:2526 (smtpd, cleanup, a queue file with fsync), relayed ' +
      'by smtp to smtp-sink on :2600; it verifies nothing and parses no MIME. Best round of each side; CPU from /proc: the daemon, ' +
      "all threads, from the round's first connection to its last POST; Postfix, the master and every process it forked (live ones " +
      "plus the reaped ones' cutime/cstime), to the last message at the sink. Neither counts smtp-source, the receiver or the sink.",
    '',
    table(['measure', 'postrider', 'Postfix', 'ratio', 'all rounds, postrider / Postfix'], [
      ...rowsOf('a connection per message', perConnection),
      ...(keptRounds ? rowsOf('kept connections (-d)', keptRounds) : []),
    ]),
    ...(parts ? ['', profileTable(parts)] : []),
  ].join('\n');
  return { text, reading: reading({ c, perConnection, keptRounds }), summary: summary({ c, length, perConnection, keptRounds }) };
}

function reading({ c, perConnection, keptRounds }) {
  const o = bestOf(perConnection.ours, 'rate');
  const t = bestOf(perConnection.theirs, 'rate');
  const oe = bestOf(perConnection.ours, 'e2eRate');
  const te = bestOf(perConnection.theirs, 'e2eRate');
  const k = keptRounds && keptRounds.ours[0];
  return (
    `With a connection per message postrider accepted ${fmt(o.rate)} msg/s (${ratio(o.rate, t.rate)} Postfix's ${fmt(t.rate)}) and handed ` +
    `${fmt(oe.e2eRate)} msg/s to the app verified, parsed and signed (${ratio(oe.e2eRate, te.e2eRate)} Postfix's ${fmt(te.e2eRate)} msg/s relayed), ` +
    `at ${cpuCell(oe)} CPU ms per message against Postfix's ${cpuCell(te)}. Its main thread was ${o.cpu ? `${(o.cpu.mainBusy * 100).toFixed(0)}%` : 'n/a'} busy ` +
    `meanwhile: that intake is not bound by CPU but by smtp-server's fixed 100 ms pause before the greeting (early-talker detection), ` +
    `which caps ${c} sessions at ${c} / 0.1 s = ${fmt(c / 0.1)} connections/s whatever the machine; a real MX has many more senders ` +
    'connected at once, so there the pause costs latency, not throughput.' +
    (k ? ` Over kept connections (no greeting per message) postrider accepted ${fmt(k.rate)} msg/s and posted ${fmt(k.e2eRate)} msg/s at ${cpuCell(k)} CPU ms per message.` : '') +
    ' Postfix does far less per message here (no authentication, no MIME parsing, no JSON, no signature): the end-to-end figures compare ' +
    'the hand-over to the next hop, not equal work.'
  );
}

function summary({ c, length, perConnection, keptRounds }) {
  const o = bestOf(perConnection.ours, 'rate');
  const t = bestOf(perConnection.theirs, 'rate');
  const oe = bestOf(perConnection.ours, 'e2eRate');
  const te = bestOf(perConnection.theirs, 'e2eRate');
  const rows = [
    { measure: `inbound intake, ${fmt(length)}-byte DKIM-signed message, ${c} sessions, a connection per message (msg/s accepted)`, postrider: fmt(o.rate), postfix: fmt(t.rate), ratio: ratio(o.rate, t.rate) },
    { measure: 'inbound end to end: posted to the app / relayed to smtp-sink (msg/s)', postrider: fmt(oe.e2eRate), postfix: fmt(te.e2eRate), ratio: ratio(oe.e2eRate, te.e2eRate) },
    { measure: 'inbound CPU ms per message, until posted / relayed', postrider: cpuCell(oe), postfix: cpuCell(te), ratio: ratio(oe.cpu?.total, te.cpu?.total) },
  ];
  if (keptRounds) {
    const [k, kt] = [keptRounds.ours[0], keptRounds.theirs[0]];
    rows.push({ measure: 'inbound over kept connections (smtp-source -d): accepted / end to end (msg/s)', postrider: `${fmt(k.rate)} / ${fmt(k.e2eRate)}`, postfix: `${fmt(kt.rate)} / ${fmt(kt.e2eRate)}`, ratio: `${ratio(k.rate, kt.rate)} / ${ratio(k.e2eRate, kt.e2eRate)}` });
  }
  return rows;
}

function profileTable(p) {
  const row = ([k, ms, share]) => [k, fmt(ms, 3), `${(share * 100).toFixed(1)}%`];
  return [
    `The daemon's main thread under --cpu-prof, one more round of ${fmt(p.messages)} messages (a connection per message) not counted ` +
      `above (the profiler slows it: ${fmt(p.round.rate)} msg/s accepted, ${fmt(p.round.e2eRate)} posted), its samples from the first ` +
      `connection to the last POST: busy ${fmt(p.totalMs)} ms of ${fmt(p.windowMs)} ms (${((p.totalMs / p.windowMs) * 100).toFixed(0)}%), ` +
      `${fmt(p.perMessage, 3)} ms per message. By part of the work (each sample goes to the innermost part on its stack, ours ` +
      "before the libraries', so the parts add up; parts under 0.5% left out):",
    '',
    table(['part', 'ms per message', 'share'], p.parts.filter(([, , share]) => share >= 0.005).map(row)),
    '',
    'The heaviest frames by self time:',
    '',
    table(['part', 'frame', 'ms per message', 'share'], p.frames.map(([k, ms, share]) => [...k.split(' | ').map((x) => x.trim() || '(native)'), fmt(ms, 3), `${(share * 100).toFixed(1)}%`])),
  ].join('\n');
}
