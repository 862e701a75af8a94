/**
 * A deep queue: memory and restart time with 1,000,000 queued messages (issue #20, "Memory
 * stays bounded"). The daemon sets up a live channel with a verified domain and stops; the
 * benchmark then fills its store directly through the store's own verb (commitMessages, the
 * commit an API send makes, in transactions of --batch messages: record, body, events, queue
 * entry and one delivery job each; small unsigned bodies, so nothing waits for a signature),
 * and starts `postrider serve` again on that folder with delivery on towards smtp-sink (the MX
 * of the recipient domains, cap lifted). Measured: RSS of the daemon when it is ready and
 * while it delivers (sampled every 250 ms for --seconds), and the time from spawning the process
 * to the first message at the sink.
 */
import { randomUUID } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { startDns } from './lib/dns.mjs';
import { publishSinkDomains, setupSender, startPostrider } from './lib/postrider.mjs';
import { memoryCgroup } from './lib/cgroup.mjs';
import { faultAround } from './lib/fault-around.mjs';
import { rssOf } from './lib/memory.mjs';
import { fmt } from './lib/report.mjs';
import { SINK_PORT, startSink } from './lib/sink.mjs';

export const meta = {
  name: 'queue',
  heading: 'A queue of 1,000,000 messages: memory and restart to first delivery (bench/queue-scale.mjs)',
  needsPostfix: false,
  options: { messages: 1_000_000, batch: 2000, seconds: 20, 'memory-limit': 300 },
  usage:
    '--messages=1000000 queued before the restart, --batch=2000 messages per fill transaction, --seconds=20 of delivery during which RSS is sampled, ' +
    '--memory-limit=300 MB of a memory cgroup for a second restart (0: none)',
};

const RSS_GOAL_MB = 300;
const FIRST_DELIVERY_GOAL_S = 2;
const DOMAINS = 10;

/** A small RFC 5322 message, as an API send would store it before delivery. */
function body(id, from, to) {
  return Buffer.from(
    `From: ${from}\r\nTo: ${to}\r\nSubject: Queue scale ${id.slice(0, 8)}\r\nMessage-ID: <${id}@shop-bench-postrider.com>\r\n` +
      `Date: ${new Date().toUTCString()}\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nQueued message ${id}.\r\n`,
  );
}

function accepted({ accountId, channel, domains }, i, createdAt) {
  const id = randomUUID();
  const from = 'receipts@shop-bench-postrider.com';
  const to = `u${i}@${domains[i % domains.length]}`;
  const b = body(id, from, to);
  return {
    body: b,
    record: {
      id, accountId, channelId: channel.id, mailType: 'transactional', mailSource: 'api', deliveryType: 'live', createdAt,
      messageIdHeader: `<${id}@shop-bench-postrider.com>`, subject: `Queue scale ${id.slice(0, 8)}`, from: { email: from }, to: [{ email: to }],
      cc: [], bcc: [], replyTo: [], tracking: channel.tracking, tags: [], headers: {}, metadata: {}, attachments: [], size: b.length,
      recipients: [to], suppressed: [],
    },
  };
}

/** Fills the stopped daemon's store with `messages` queued messages; returns seconds and MiB. */
async function fill(dataDir, channelId, domains, { messages, batch }, progress) {
  const { Store } = await import('../dist/store/lmdb/env.js');
  const { commitMessages } = await import('../dist/store/lmdb/messages.js');
  const { getChannel } = await import('../dist/store/lmdb/channel-records.js');
  const store = new Store({ dataDir });
  await store.start();
  try {
    const channel = getChannel(store, channelId);
    const ctx = { accountId: channel.accountId, channel, domains };
    const t0 = performance.now();
    for (let done = 0; done < messages; done += batch) {
      const n = Math.min(batch, messages - done);
      const createdAt = new Date().toISOString();
      await commitMessages(store, { messages: Array.from({ length: n }, (_, k) => accepted(ctx, done + k, createdAt)) });
      if ((done / batch) % 50 === 0) progress(`  ${fmt(done)} queued`);
    }
    return { seconds: (performance.now() - t0) / 1000, mib: store.sizeBytes() / 1048576 };
  } finally {
    await store.stop();
  }
}

/** Starts the daemon on the filled folder and watches it deliver for `seconds`. */
async function restartAndWatch(p, env, seconds, sink, cgroup) {
  await p.stop({ keepData: true });
  sink.reset();
  const t0 = performance.now();
  const q = await startPostrider(env, { dataDir: p.dataDir, cgroupProcs: cgroup?.procs });
  const readyS = (performance.now() - t0) / 1000;
  const atReady = rssOf(q.pid);
  const samples = [];
  const end = performance.now() + seconds * 1000;
  while (performance.now() < end && alive(q.pid)) {
    samples.push(rssOf(q.pid));
    await new Promise((r) => setTimeout(r, 250));
  }
  if (!alive(q.pid)) throw new Error(`postrider died while delivering${cgroup ? ` (OOM kills in its cgroup: ${cgroup.oomKills()})` : ''}; see ${q.logFile}`);
  const last = rssOf(q.pid);
  samples.push(last);
  const firstS = sink.count > 0 ? (sink.times[0] - t0) / 1000 : NaN;
  const max = (k) => Math.max(...samples.map((s) => s[k]));
  return { q, readyS, firstS, atReady, maxRss: max('rss'), maxAnon: max('anon'), maxFile: max('file'), last, delivered: sink.count };
}

/**
 * Evicts the data folder's LMDB files from the page cache (GNU dd: nocache with count=0 drops a
 * whole file's clean pages). Pages cached by the fill or by the first run are charged to the
 * cgroup that read them, not the daemon's, yet its RSS counts them once mapped: without this the
 * constrained run would show their RSS but never be charged for, or reclaim, them.
 */
function dropFileCache(dataDir) {
  for (const f of fs.readdirSync(dataDir, { recursive: true })) {
    if (String(f).endsWith('.mdb')) execFileSync('dd', [`if=${path.join(dataDir, String(f))}`, 'iflag=nocache', 'count=0', 'status=none']);
  }
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * The same restart inside a memory cgroup of --memory-limit MB: RSS counts LMDB's mapped file
 * pages, which the kernel reclaims only under pressure, so the unconstrained peak says little
 * about what the daemon needs. Inside a hard limit the process must keep delivering, with no
 * OOM kill. Null when the machine allows no cgroup (not root, read-only /sys/fs/cgroup).
 */
async function restartConstrained(p, env, opts, sink, progress) {
  const cgroup = opts['memory-limit'] > 0 ? memoryCgroup(opts['memory-limit']) : null;
  if (!cgroup) {
    progress(opts['memory-limit'] > 0 ? 'no writable memory cgroup here: the constrained restart is skipped' : 'constrained restart off (--memory-limit=0)');
    return { p, c: null };
  }
  progress(`restarting inside a ${opts['memory-limit']} MB memory cgroup (v${cgroup.version})`);
  try {
    await p.stop({ keepData: true });
    dropFileCache(p.dataDir);
    const w = await restartAndWatch(p, env, opts.seconds, sink, cgroup);
    const c = { ...w, cgroupPeakMb: cgroup.peakMb(), oomKills: cgroup.oomKills(), limitMb: cgroup.limitMb };
    progress(
      `in ${c.limitMb} MB: first message after ${c.firstS.toFixed(2)} s; RSS max ${fmt(c.maxRss)} MB (anonymous ${fmt(c.maxAnon)}); ` +
        `cgroup peak ${fmt(c.cgroupPeakMb)} MB; OOM kills ${c.oomKills}; ${fmt(c.delivered)} delivered in ${opts.seconds} s`,
    );
    await w.q.stop({ keepData: true });
    return { p: w.q, c };
  } finally {
    cgroup.remove();
  }
}

export async function run(opts, { progress }) {
  const dns = await startDns();
  const domains = publishSinkDomains(dns, DOMAINS);
  const sink = await startSink();
  let p;
  let w;
  try {
    p = await startPostrider({ POSTRIDER_DNS_SERVERS: dns.address, POSTRIDER_DELIVERY_ENABLED: 'false' });
    const { channelId } = await setupSender(p, dns);
    await p.stop({ keepData: true });
    progress(`filling the store with ${fmt(opts.messages)} queued messages (${fmt(opts.batch)} per transaction)`);
    const filled = await fill(p.dataDir, channelId, domains, opts, progress);
    progress(`filled in ${filled.seconds.toFixed(1)} s (${fmt(opts.messages / filled.seconds)} msg/s, ${fmt(filled.mib)} MiB); restarting with delivery on`);
    const env = { POSTRIDER_DNS_SERVERS: dns.address, POSTRIDER_DELIVERY_PORT: String(SINK_PORT), POSTRIDER_DELIVERY_RATE: '100000', POSTRIDER_DELIVERY_PER_DOMAIN_CONCURRENCY: '20' };
    w = await restartAndWatch(p, env, opts.seconds, sink);
    progress(
      `ready after ${w.readyS.toFixed(2)} s, first message at the sink after ${w.firstS.toFixed(2)} s; RSS ${fmt(w.atReady.rss)} MB at ready, ` +
        `max ${fmt(w.maxRss)} MB (anonymous ${fmt(w.maxAnon)}, file ${fmt(w.maxFile)}); ${fmt(w.delivered)} delivered in ${opts.seconds} s`,
    );
    p = w.q;
    const constrained = await restartConstrained(p, env, opts, sink, progress);
    p = constrained.p;
    progress('measuring the RSS one random LMDB read adds (fault-around), file cached and not');
    const fa = await faultAround();
    return report(opts, filled, w, constrained.c, fa);
  } finally {
    await p?.stop();
    await sink.stop();
    await dns.close();
  }
}

function constrainedRows(c, seconds) {
  if (!c) return ['| inside a memory cgroup | not measured (no writable memory cgroup on this machine) | |'];
  return [
    `| restart inside a ${c.limitMb} MB memory cgroup: OOM kills | ${c.oomKills} | 0 |`,
    `| inside it: RSS max / anonymous max / cgroup peak charge (MB) | ${fmt(c.maxRss)} / ${fmt(c.maxAnon)} / ${fmt(c.cgroupPeakMb)} | < ${c.limitMb} |`,
    `| inside it: process start → first message at the sink (s) | ${c.firstS.toFixed(2)} | < ${FIRST_DELIVERY_GOAL_S} |`,
    `| inside it: delivered in the ${seconds} s window | ${fmt(c.delivered)} | |`,
  ];
}

function report(opts, filled, w, c, fa) {
  const ok = (good) => (good ? 'within the goal' : '**over the goal**');
  const text = [
    `What is measured: ${fmt(opts.messages)} messages queued (one recipient each over ${DOMAINS} recipient domains whose MX is smtp-sink on ` +
      `127.0.0.1:${SINK_PORT}; bodies of about 300 bytes, unsigned, so nothing waits for a signature) in a live channel of the ` +
      `store the daemon set up, written through commitMessages in transactions of ${fmt(opts.batch)} ` +
      `(${filled.seconds.toFixed(1)} s, ${fmt(opts.messages / filled.seconds)} msg/s; LMDB file ${fmt(filled.mib)} MiB). Then \`postrider serve\` ` +
      `starts on that folder with delivery on (rate cap lifted, 20 connections per domain); RSS is the daemon's VmRSS from /proc, ` +
      `sampled every 250 ms for ${opts.seconds} s; "first delivery" counts from spawning the process to the first message smtp-sink reports.`,
    '',
    '| measure | value | goal |',
    '|---|---|---|',
    `| RSS when ready (MB) | ${fmt(w.atReady.rss)} (anonymous ${fmt(w.atReady.anon)}, file pages ${fmt(w.atReady.file)}) | < ${RSS_GOAL_MB} |`,
    `| RSS, max while delivering ${opts.seconds} s (MB) | ${fmt(w.maxRss)} (peak VmHWM ${fmt(w.last.peak)}) | < ${RSS_GOAL_MB} |`,
    `| of which anonymous / file pages (LMDB map), max (MB) | ${fmt(w.maxAnon)} / ${fmt(w.maxFile)} | |`,
    `| process start → ready (s) | ${w.readyS.toFixed(2)} | |`,
    `| process start → first message at the sink (s) | ${w.firstS.toFixed(2)} | < ${FIRST_DELIVERY_GOAL_S} |`,
    `| delivered in the ${opts.seconds} s window | ${fmt(w.delivered)} | |`,
    ...constrainedRows(c, opts.seconds),
    `| RSS (file pages) added per random read of a ${fmt(fa.fileMb)} MB LMDB file, file in the page cache / not (KB; ${fmt(fa.reads)} reads) | ${fa.cachedKb.toFixed(1)} / ${fa.uncachedKb.toFixed(1)} | |`,
  ].join('\n');
  const peak = Math.max(w.maxRss, w.last.peak);
  const reading =
    `With ${fmt(opts.messages)} messages queued the daemon peaked at ${fmt(peak)} MB RSS (${ok(peak < RSS_GOAL_MB)}) and ` +
    `the first message reached the sink ${w.firstS.toFixed(2)} s after the process started (${ok(w.firstS < FIRST_DELIVERY_GOAL_S)}). ` +
    `Anonymous memory (heaps of the main thread and the worker threads, buffers) peaked at ${fmt(w.maxAnon)} MB; the rest ` +
    `(${fmt(w.maxFile)} MB at most) is pages of the LMDB file mapped into the process, which RSS counts but the kernel can reclaim. ` +
    `Most of those were never read: on a read fault of a file mapping Linux also maps the neighbouring pages already in the page ` +
    `cache (fault-around), so one random read of a cached LMDB file added ${fa.cachedKb.toFixed(0)} KB of RSS here, against ` +
    `${fa.uncachedKb.toFixed(1)} KB once the file was out of the cache (bench/lib/fault-around.mjs); the fill had just written the whole file, so it was all cached. ` +
    `No memory-mapped store can keep RSS under a fixed figure without memory pressure; the bound that matters is the one under a limit.` +
    (c
      ? ` Restarted inside a ${c.limitMb} MB memory cgroup, it ${c.oomKills === 0 ? 'was never OOM-killed' : `was OOM-killed ${c.oomKills} time(s)`}, ` +
        `its RSS stayed at ${fmt(c.maxRss)} MB at most (${ok(c.maxRss < c.limitMb)}) and it delivered ${fmt(c.delivered)} messages in ${opts.seconds} s ` +
        `(${fmt(w.delivered)} without the limit, from a warm page cache). ` +
        (c.delivered >= w.delivered / 4
          ? 'The file pages are reclaimed as needed and delivery goes on at a useful rate, so the memory the daemon needs is bounded.'
          : '**Memory is bounded but delivery slows down sharply under this limit**: see which reads fault pages in (major faults per message).')
      : '');
  return {
    text,
    reading,
    summary: [
      { measure: `RSS with ${fmt(opts.messages)} messages queued, peak while delivering (MB; goal < ${RSS_GOAL_MB})`, postrider: fmt(peak), postfix: 'n/a', ratio: 'n/a' },
      { measure: `of that RSS, anonymous memory at its peak (MB; the rest is LMDB file pages)`, postrider: fmt(w.maxAnon), postfix: 'n/a', ratio: 'n/a' },
      ...(c
        ? [
            {
              measure: `RSS peak delivering with ${fmt(opts.messages)} queued inside a ${c.limitMb} MB memory cgroup (MB; OOM kills; delivered in ${opts.seconds} s)`,
              postrider: `${fmt(c.maxRss)}; ${c.oomKills}; ${fmt(c.delivered)}`,
              postfix: 'n/a',
              ratio: 'n/a',
            },
          ]
        : []),
      { measure: `restart to first delivery with ${fmt(opts.messages)} queued (s; goal < ${FIRST_DELIVERY_GOAL_S})`, postrider: w.firstS.toFixed(2), postfix: 'n/a', ratio: 'n/a' },
    ],
  };
}
