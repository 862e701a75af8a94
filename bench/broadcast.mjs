/**
 * Broadcast expansion: one POST /send/broadcast with K entries (live channel, verified RSA-2048
 * domain, delivery disabled), then the time until the background expander has turned every
 * entry into a committed message (GET /metrics postrider_messages_accepted_total). A second run
 * sends transactional messages meanwhile and reports their latency (p99), against the same sends
 * with no broadcast: expansion must not starve them. With --profile (the default) a third run
 * under `node --cpu-prof` shows where the worker threads and the main thread spend their time.
 * No peer: Postfix has no templates or broadcasts.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startDns } from './lib/dns.mjs';
import { FROM, sendPayload } from './lib/message.mjs';
import { publishSinkDomains, setupSender, startPostrider, expectStatus } from './lib/postrider.mjs';
import { summarizeDir } from './lib/profile.mjs';
import { fmt, percentile, table } from './lib/report.mjs';
import { cpuMs } from './lib/cpu.mjs';

export const meta = {
  name: 'broadcast',
  heading: 'Broadcast expansion (bench/broadcast.mjs)',
  needsPostfix: false,
  options: { entries: 10000, profile: true, threads: 0 },
  usage: '--entries=10000 (at most limits.broadcastMessages, 10,000), --profile=true (a third run under node --cpu-prof), --threads=0 (workers.threads; 0: the default, one per core)',
};

const TEMPLATE = {
  subject: 'Your {{month}} statement, {{name}}',
  html: '<html><body><h1>Hello {{name}}</h1><p>Your balance on {{date}} is <b>{{balance}}</b>.</p>{{#each items}}<p>{{this.label}}: {{this.amount}}</p>{{/each}}<p>Thank you for banking with us.</p></body></html>',
  text: 'Hello {{name}},\nyour balance on {{date}} is {{balance}}.\n{{#each items}}{{this.label}}: {{this.amount}}\n{{/each}}Thank you for banking with us.\n',
};

/** What the worker thread's profile is broken down into (inclusive time unless `self`). */
const PARTS = [
  ['DKIM: private key parsed from PEM (crypto.createPrivateKey)', /^createPrivateKey /],
  ['DKIM: RSA-2048 private-key operation (crypto.sign)', /^signOneShot /],
  ['DKIM: mailauth canonicalization, hashing, header (self time in mailauth)', /mailauth\//, 'self'],
  ['Handlebars: compiling templates', /^compileInput handlebars/],
  ['Handlebars: whole render incl. compile', /^render dist\/workers\/render\.js:/],
  ['MIME composition (nodemailer, synchronous part)', /^composeMessage /],
  ['garbage collection', /^\(garbage collector\)/, 'self'],
  ['idle: waiting for the next task (piscina Atomics.wait)', /^atomicsWaitLoop /],
];

/**
 * Transactional sends, `clients` closed loops each pausing `gapMs` between its sends, until
 * stop() is called: a steady trickle of sends like a shop's receipts, not a load test. Latency
 * is measured per request, from fetch to the answer.
 */
function probeSends(p, channelId, { clients = 2, gapMs = 40 } = {}) {
  const latencies = [];
  let failed = 0;
  let inFlight = 0;
  let stopped = false;
  const loop = async () => {
    while (!stopped) {
      inFlight++;
      const t0 = performance.now();
      const res = await p.api('POST', '/send/transactional', sendPayload(), { 'x-service-channel-id': channelId });
      inFlight--;
      if (res.status === 200) latencies.push(performance.now() - t0);
      else failed++;
      await new Promise((r) => setTimeout(r, gapMs));
    }
  };
  const loops = Array.from({ length: clients }, loop);
  return {
    /** Sends answered 200 plus those still in flight: an upper bound of the messages they added. */
    added: () => latencies.length + inFlight,
    async stop() {
      stopped = true;
      await Promise.all(loops);
      const sorted = [...latencies].sort((a, b) => a - b);
      return { n: sorted.length, failed, p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted.at(-1) ?? NaN };
    },
  };
}

async function expandOnce({ entries, threads, nodeArgs = [], probe = false }, progress) {
  const dns = await startDns();
  const domains = publishSinkDomains(dns, 10);
  let p;
  try {
    p = await startPostrider({ POSTRIDER_DNS_SERVERS: dns.address, POSTRIDER_DELIVERY_ENABLED: 'false', POSTRIDER_WORKERS_THREADS: String(threads) }, { nodeArgs });
    const { channelId } = await setupSender(p, dns);
    let quiet = null;
    if (probe) {
      // The same trickle first without any expansion: what the p99 during expansion compares with.
      const q = probeSends(p, channelId);
      await new Promise((r) => setTimeout(r, 5_000));
      quiet = await q.stop();
    }
    const messages = Array.from({ length: entries }, (_, i) => ({
      to: [{ email: `user${i}@${domains[i % domains.length]}`, name: `User ${i}` }],
      data: { name: `User ${i}`, balance: `${(i * 13.37).toFixed(2)} EUR`, items: [{ label: 'Fees', amount: '0.00' }, { label: 'Interest', amount: '1.20' }] },
    }));
    const body = { from: FROM, template: { ...TEMPLATE, data: { month: 'March', date: '31 March' } }, messages, tags: ['statement'] };
    const before = await p.metric('postrider_messages_accepted_total');
    const what = [nodeArgs.length ? 'daemon under --cpu-prof' : '', probe ? 'transactional sends meanwhile' : ''].filter(Boolean).join(', ');
    progress(`POST /send/broadcast with ${entries} entries${what ? ` (${what})` : ''}`);
    const cpu0 = cpuMs(p.pid);
    const t0 = performance.now();
    expectStatus(await p.api('POST', '/send/broadcast', body, { 'x-service-channel-id': channelId }), 200, 'POST /send/broadcast');
    const acceptedS = (performance.now() - t0) / 1000;
    const sends = probe ? probeSends(p, channelId) : null;
    const deadline = Date.now() + 300_000;
    // Accepted messages count the transactional sends too: the broadcast is done once the count
    // exceeds them by `entries` (sends in flight counted as added, so it never ends early).
    const expanded = async () => (await p.metric('postrider_messages_accepted_total')) - before - (sends?.added() ?? 0);
    let done = 0;
    while ((done = await expanded()) < entries) {
      if (Date.now() > deadline) throw new Error(`broadcast: ${done} of ${entries} messages after 300 s`);
      // Not faster: each GET /metrics costs the daemon a few ms of its main thread.
      await new Promise((r) => setTimeout(r, 250));
    }
    const seconds = (performance.now() - t0) / 1000;
    const cpu1 = cpuMs(p.pid);
    const cpu = cpu0 && cpu1 ? { main: (cpu1.main - cpu0.main) / entries, total: (cpu1.total - cpu0.total) / entries } : null;
    const during = await sends?.stop();
    // Committed is not ready: the finishing stage composes and signs after the commit, and a
    // message's jobs are due only then. Ready once no message waits for it.
    while ((await p.metric('postrider_messages_awaiting_signature')) > 0) {
      if (Date.now() > deadline) throw new Error('broadcast: messages still awaiting composition/signature after 300 s');
      await new Promise((r) => setTimeout(r, 250));
    }
    const readyS = (performance.now() - t0) / 1000;
    progress(`expanded ${entries} entries in ${seconds.toFixed(1)} s (${fmt(entries / seconds)} messages/s committed; all ready (finished) after ${readyS.toFixed(1)} s, ${fmt(entries / readyS)} messages/s; 200 after ${acceptedS.toFixed(2)} s)` +
      (cpu ? `; daemon CPU per message: main thread ${fmt(cpu.main, 3)} ms, all threads ${fmt(cpu.total, 3)} ms` : '') +
      (during ? `; transactional sends meanwhile: ${during.n}, p50 ${fmt(during.p50, 1)} ms, p99 ${fmt(during.p99, 1)} ms (quiet: p99 ${fmt(quiet.p99, 1)} ms)` : ''));
    return { acceptedS, seconds, readyS, quiet, during, cpu };
  } finally {
    await p?.stop(); // the profiles are written when the daemon exits
    await dns.close();
  }
}

/** Frames of the main thread listed by self time (the heaviest, leaving out start-up). */
const MAIN_TOP = 8;

function breakdown(profDir) {
  const profiles = summarizeDir(profDir);
  const isWorker = (s) => s.inclusive.some(([k]) => /^atomicsWaitLoop /.test(k));
  const workers = profiles.filter(isWorker);
  const main = profiles.find((s) => !isWorker(s));
  if (workers.length === 0) return null;
  const totalMs = workers.reduce((a, w) => a + w.totalMs, 0);
  // Shares over all worker threads together: each thread's time in the part, summed.
  const share = (re, kind) => {
    const msOf = (w) =>
      kind === 'self' ? w.self.filter(([k]) => re.test(k)).reduce((a, [, v]) => a + v, 0) : (w.inclusive.find(([k]) => re.test(k))?.[1] ?? 0);
    return workers.reduce((a, w) => a + msOf(w), 0) / totalMs;
  };
  const mainTop = main ? main.self.filter(([k]) => !/^\((program|idle)\)/.test(k)).slice(0, MAIN_TOP) : [];
  return {
    totalMs,
    threads: workers.length,
    rows: PARTS.map(([label, re, kind]) => [label, `${(share(re, kind) * 100).toFixed(0)}%`]),
    share,
    main: main ? { totalMs: main.totalMs, rows: mainTop.map(([k, ms]) => [`\`${k}\``, fmt(ms), `${((ms / main.totalMs) * 100).toFixed(0)}%`]) } : null,
  };
}

async function profiled(entries, threads, progress) {
  const profDir = fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-bench-prof-'));
  try {
    await expandOnce({ entries, threads, nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${profDir}`] }, progress);
    return breakdown(profDir);
  } finally {
    // BENCH_KEEP_DATA=1 keeps the .cpuprofile files too, for a look at every thread's frames.
    if (process.env.BENCH_KEEP_DATA) progress(`CPU profiles kept in ${profDir}`);
    else fs.rmSync(profDir, { recursive: true, force: true });
  }
}

function profileLines(prof) {
  const lines = [
    '',
    `Where the worker threads' time went (third run, daemon under \`node --cpu-prof\`, ${prof.threads} worker thread(s), ` +
      `${fmt(prof.totalMs)} ms of samples together; inclusive shares overlap, e.g. compiling is part of rendering):`,
    '',
    table(['part', 'share of the worker threads'], prof.rows),
  ];
  if (prof.main) {
    lines.push('', `The main thread's heaviest frames by self time (${fmt(prof.main.totalMs)} ms of samples, start-up included):`, '',
      table(['frame', 'self ms', 'share'], prof.main.rows));
  }
  return lines;
}

const cpuCell = (cpu) => (cpu ? `${fmt(cpu.main, 3)} / ${fmt(cpu.total, 3)}` : 'n/a');
const cpuBound = (cpu) => Math.min(1000 / cpu.main, (os.availableParallelism() * 1000) / cpu.total);

function readingOf(entries, r, prof) {
  const rate = (x) => fmt(entries / x.seconds);
  let reading = `Expansion committed ${rate(r)} messages/s alone (all ready, composed and signed, at ${fmt(entries / r.readyS)} messages/s) and ${rate(r.probed)} messages/s with transactional sends meanwhile; ` +
    `those sends were answered with p99 ${fmt(r.probed.during.p99, 1)} ms during the expansion (${fmt(r.probed.quiet.p99, 1)} ms without one).`;
  if (!prof) return `${reading} Run with --profile=true to see where the time goes.`;
  const pct = (i) => Math.round(prof.share(PARTS[i][1], PARTS[i][2]) * 100);
  const costly = [0, 1, 3, 5].filter((i) => pct(i) >= 5).sort((x, y) => pct(y) - pct(x));
  reading +=
    ` The worker threads' largest costs: ${costly.map((i) => `${PARTS[i][0].replace(/ \(.*\)$/, '')} ${pct(i)}%`).join('; ') || 'none over 5%'}` +
    `. They wait ${pct(7)}% of the time for the next task` +
    (prof.main ? `; the main thread's heaviest frame is ${prof.main.rows[0]?.[0] ?? 'n/a'} (${prof.main.rows[0]?.[2] ?? 'n/a'} of its samples).` : '.');
  return reading;
}

export async function run({ entries, profile, threads }, { progress }) {
  const alone = await expandOnce({ entries, threads }, progress);
  const probed = await expandOnce({ entries, threads, probe: true }, progress);
  const r = { ...alone, probed };
  const prof = profile ? await profiled(entries, threads, progress) : null;
  const lines = [
    `One broadcast of ${fmt(entries)} entries (Handlebars subject, html with an {{#each}}, text; 10 recipient domains), ` +
      'live channel with a verified RSA-2048 DKIM domain, delivery disabled. The expander commits 100 entries per write ' +
      'transaction, one write in flight, each as its normalized request (main-thread work only: suppressions, the subject, the commit), ' +
      'prepared 25 entries per event-loop turn, each write first waiting up to 20 ms for pending writes of others (sends) to commit; ' +
      `the finishing stage renders, composes and signs them after the commit in the worker pool (${threads ? `${threads} thread(s)` : 'one thread per core, the default'}), ` +
      'in its background lane, behind the transactional sends, while the expansion goes on. ' +
      'The second run sends transactional messages meanwhile (2 clients, each one send then a 40 ms pause, from the POST of the broadcast ' +
      'until the last entry is committed), after 5 s of the same sends without any broadcast.',
    '',
    table(
      ['run', '200 after s', 'all committed after s', 'committed messages/s', 'all ready (composed, signed) after s', 'ready messages/s', 'CPU ms per message: main thread / all threads', 'transactional sends: n, p50 / p99 / max ms'],
      [
        ['expansion alone', alone.acceptedS.toFixed(2), alone.seconds.toFixed(1), fmt(entries / alone.seconds), alone.readyS.toFixed(1), fmt(entries / alone.readyS), cpuCell(alone.cpu), ''],
        ['with transactional sends', probed.acceptedS.toFixed(2), probed.seconds.toFixed(1), fmt(entries / probed.seconds), probed.readyS.toFixed(1), fmt(entries / probed.readyS), cpuCell(probed.cpu),
          `${probed.during.n} (${probed.during.failed} failed), ${fmt(probed.during.p50, 1)} / ${fmt(probed.during.p99, 1)} / ${fmt(probed.during.max, 1)}`],
        ['the same sends, no broadcast', '', '', '', '', '', '', `${probed.quiet.n} (${probed.quiet.failed} failed), ${fmt(probed.quiet.p50, 1)} / ${fmt(probed.quiet.p99, 1)} / ${fmt(probed.quiet.max, 1)}`],
      ],
    ),
    ...(alone.cpu
      ? ['', `CPU time is read from /proc: it depends little on what else the machine runs. On ${os.availableParallelism()} idle cores the expansion alone could reach at most ` +
          `${fmt(cpuBound(alone.cpu))} messages/s (the main thread cannot go past 1,000 / its ms per message, all threads together past cores × 1,000 / theirs).`]
      : []),
    ...(prof ? profileLines(prof) : []),
  ];
  return {
    text: lines.join('\n'),
    reading: readingOf(entries, r, prof),
    summary: [
      { measure: `broadcast expansion, ${fmt(entries)} entries (messages committed/s)`, postrider: fmt(entries / alone.seconds), postfix: 'n/a (no templates)', ratio: 'n/a' },
      { measure: `broadcast expansion, ${fmt(entries)} entries (messages ready, composed and signed, /s)`, postrider: fmt(entries / alone.readyS), postfix: 'n/a', ratio: 'n/a' },
      { measure: `transactional send p99 during that expansion (ms)`, postrider: fmt(probed.during.p99, 1), postfix: 'n/a', ratio: 'n/a' },
    ],
  };
}
