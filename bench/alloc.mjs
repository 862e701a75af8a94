/**
 * Allocation per message on the daemon's main thread, by site, no Postfix needed:
 *
 *   npm run build && node bench/alloc.mjs --path=smtp|http [--n=3000] [--c=20] [--warmup=500]
 *     [--heap=true] [--interval=8192] [--top=25] [--keep=false] [--inline=true] [--deliver=false]
 *
 * Starts the daemon (delivery disabled, as the intake benchmarks do) with
 * bench/lib/heap-sampling.cjs preloaded, warms up, then samples every allocation of the main
 * thread (garbage included) while `n` messages are taken in and finished (composed and signed
 * by the workers; the main thread stores the result), and prints bytes per message by site.
 * --heap=false runs the same load without the profiler and prints only the main thread's CPU
 * ms per message (/proc), for before/after comparisons. --deliver=true: end to end, delivery on
 * (rate cap lifted, `c` connections) to an smtp-sink on a free port, sampled until every
 * message is delivered.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { cpuMs, finished } from './lib/cpu.mjs';
import { startDns } from './lib/dns.mjs';
import { allocTable, analyze } from './lib/heap-profile.mjs';
import { composedMessage, FROM, sendLoad, TO } from './lib/message.mjs';
import { freePort, publishSinkDomains, setupSender, startPostrider } from './lib/postrider.mjs';
import { startSink } from './lib/sink.mjs';
import { submissionLoad } from './lib/smtp-load.mjs';

const PRELOAD = fileURLToPath(new URL('./lib/heap-sampling.cjs', import.meta.url));

function options() {
  const o = { path: 'smtp', n: 3000, c: 20, warmup: 500, heap: true, interval: 8192, top: 25, keep: false, inline: true, deliver: false };
  for (const a of process.argv.slice(2)) {
    const m = /^--([a-z]+)=(.*)$/.exec(a);
    if (!m || !(m[1] in o)) throw new Error(`unknown option ${a}`);
    o[m[1]] = typeof o[m[1]] === 'number' ? Number(m[2]) : typeof o[m[1]] === 'boolean' ? m[2] === 'true' : m[2];
  }
  return o;
}

async function waitFile(file, ms = 60_000) {
  const deadline = Date.now() + ms;
  while (!fs.existsSync(file)) {
    if (fs.existsSync(`${file.replace(/\.(started|done)$/, '')}.error`)) throw new Error(fs.readFileSync(`${file.replace(/\.(started|done)$/, '')}.error`, 'utf8'));
    if (Date.now() > deadline) throw new Error(`no ${file} after ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function httpLoad(p, channelId, amount, connections) {
  const r = await autocannon(sendLoad(p, channelId, { amount, connections }));
  return { ok: r['2xx'], failed: r.non2xx + r.errors + r.timeouts };
}

async function main() {
  const o = options();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-alloc-'));
  const profFile = path.join(dir, 'main.heapprofile');
  const dns = await startDns();
  publishSinkDomains(dns, 1);
  const raw = await composedMessage();
  // Postfix's relayhost has the usual sink port: this one takes another.
  const sink = o.deliver ? await startSink({ port: await freePort() }) : null;
  const env = sink
    ? { POSTRIDER_DNS_SERVERS: dns.address, POSTRIDER_DELIVERY_PORT: String(sink.port), POSTRIDER_DELIVERY_RATE: '100000', POSTRIDER_DELIVERY_PER_DOMAIN_CONCURRENCY: String(o.c) }
    : { POSTRIDER_DNS_SERVERS: dns.address, POSTRIDER_DELIVERY_ENABLED: 'false' };
  if (o.heap) Object.assign(env, { BENCH_HEAP_PROFILE: profFile, BENCH_HEAP_INTERVAL: String(o.interval) });
  // --inline=false: V8 inlines no function, so each allocation is charged to the function that
  // made it rather than to the optimized function it was inlined into (a little slower).
  const nodeArgs = [...(o.heap ? ['--require', PRELOAD] : []), ...(o.inline ? [] : ['--no-turbo-inlining'])];
  const p = await startPostrider(env, { nodeArgs });
  try {
    const sender = await setupSender(p, dns);
    const load =
      o.path === 'http'
        ? (count) => httpLoad(p, sender.channelId, count, o.c)
        : async (count) => {
            const r = await submissionLoad({ port: p.smtpPort, user: sender.channelId, pass: p.apiKey, count, connections: o.c, raw, from: FROM.email, to: TO.email });
            return { ok: r.sent, failed: r.failed, probe: 1 };
          };
    // Every message accepted so far finished (and, with --deliver, delivered).
    let accepted = 0;
    const settle = async (r) => {
      accepted += r.ok + (r.probe ?? 0);
      await finished(p);
      const deadline = Date.now() + 120_000;
      while (sink && (await p.metric('postrider_messages_delivered_total')) < accepted) {
        if (Date.now() > deadline) throw new Error(`fewer than ${accepted} delivered after 120 s`);
        await new Promise((res) => setTimeout(res, 50));
      }
    };
    await settle(await load(o.warmup));
    if (o.heap) {
      process.kill(p.pid, 'SIGUSR2');
      await waitFile(`${profFile}.started`);
    }
    const cpu0 = cpuMs(p.pid);
    const r = await load(o.n);
    await settle(r);
    const cpu1 = cpuMs(p.pid);
    if (o.heap) {
      process.kill(p.pid, 'SIGUSR2');
      await waitFile(`${profFile}.done`, 120_000);
    }
    const mainMs = cpu0 && cpu1 ? (cpu1.main - cpu0.main) / r.ok : NaN;
    const allMs = cpu0 && cpu1 ? (cpu1.total - cpu0.total) / r.ok : NaN;
    console.log(`path ${o.path}${sink ? ' with delivery' : ''}: ${r.ok} ok, ${r.failed} failed; CPU ms/message (until finished): main ${mainMs.toFixed(3)}, all threads ${allMs.toFixed(3)}${o.heap ? ' (under the heap profiler)' : ''}`);
    if (o.heap) report(profFile, r.ok, o);
  } finally {
    await p.stop();
    await sink?.stop();
    await dns.close();
    if (!o.keep) fs.rmSync(dir, { recursive: true, force: true });
    else console.log(`profile kept: ${profFile}`);
  }
}

function report(file, n, o) {
  const a = analyze(file);
  console.log(`\nmain thread, ${o.path}${o.deliver ? ' with delivery' : ''}: ${Math.round(a.total / n).toLocaleString('en')} bytes allocated per message (JS heap, sampling interval ${o.interval} B)\n`);
  console.log(allocTable('By allocating frame:', a.byFrame, a.total, n, o.top));
  console.log('');
  console.log(allocTable('By nearest postrider frame (dist/) above the allocation:', a.byOwnFrame, a.total, n, o.top));
  console.log('');
  console.log(allocTable('By module of the allocating frame:', a.byModule, a.total, n, 15));
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
