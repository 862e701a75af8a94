/**
 * Worker pool size: the same HTTP send load (POST /send/transactional with autocannon, live
 * channel, verified RSA-2048 domain, delivery disabled) against a daemon with one worker thread
 * (the old default on two cores: one less than the cores) and one with workers.threads at its
 * default (one per core), in alternating rounds. The daemon's CPU time per send comes from /proc.
 * No Postfix: this compares postrider with itself (the `http` benchmark compares with Postfix).
 */
import os from 'node:os';
import autocannon from 'autocannon';
import { startDns } from './lib/dns.mjs';
import { sendLoad } from './lib/message.mjs';
import { publishSinkDomains, setupSender, startPostrider } from './lib/postrider.mjs';
import { best, fmt, table } from './lib/report.mjs';
import { cpuMs } from './lib/cpu.mjs';

export const meta = {
  name: 'threads',
  heading: 'Worker pool size: HTTP sends with 1 thread and with the default (bench/pool-threads.mjs)',
  needsPostfix: false,
  options: { n: 3000, c: 20, rounds: 2 },
  usage: '--n=3000 requests per round, --c=20 connections, --rounds=2 (alternating 1 thread / default)',
};

async function cannon(p, channelId, { amount, connections }) {
  const cpu0 = cpuMs(p.pid);
  const r = await autocannon(sendLoad(p, channelId, { amount, connections }));
  const cpu1 = cpuMs(p.pid);
  const ok = r['2xx'];
  const cpu = cpu0 && cpu1 ? { main: (cpu1.main - cpu0.main) / ok, total: (cpu1.total - cpu0.total) / ok } : null;
  return { ok, bad: r.non2xx + r.errors + r.timeouts, rate: ok / r.duration, p50: r.latency.p50, p99: r.latency.p99, cpu };
}

async function daemon(threads, dns) {
  const p = await startPostrider({ POSTRIDER_DNS_SERVERS: dns.address, POSTRIDER_DELIVERY_ENABLED: 'false', POSTRIDER_WORKERS_THREADS: String(threads) });
  const { channelId } = await setupSender(p, dns);
  return { p, channelId };
}

export async function run({ n, c, rounds }, { progress }) {
  const dns = await startDns();
  publishSinkDomains(dns, 1);
  const sides = { 1: [], 0: [] };
  try {
    for (let r = 1; r <= rounds; r++) {
      for (const threads of [1, 0]) {
        const { p, channelId } = await daemon(threads, dns);
        try {
          await cannon(p, channelId, { amount: 500, connections: c }); // warm-up
          const res = await cannon(p, channelId, { amount: n, connections: c });
          sides[threads].push(res);
          progress(`round ${r}, threads=${threads || 'default'}: ${fmt(res.rate)} msg/s, p50 ${res.p50} ms, p99 ${res.p99} ms, ${res.bad} failed` +
            (res.cpu ? `, CPU per send ${fmt(res.cpu.main, 3)} ms main / ${fmt(res.cpu.total, 3)} ms all threads` : ''));
        } finally {
          await p.stop();
        }
      }
    }
  } finally {
    await dns.close();
  }
  const row = (label, list) => {
    const b = best(list);
    return [label, fmt(b.rate), `${b.p50} / ${b.p99}`, b.cpu ? `${fmt(b.cpu.main, 3)} / ${fmt(b.cpu.total, 3)}` : 'n/a', list.map((x) => fmt(x.rate)).join(', ')];
  };
  const one = best(sides[1]);
  const dflt = best(sides[0]);
  const text = [
    `${fmt(n)} sends per round after 500 to warm up, ${c} connections, ${rounds} alternating round(s); the best round of each side is shown.`,
    '',
    table(['worker threads', 'msg/s', 'p50 / p99 ms', 'CPU ms per send: main / all threads', 'all rounds (msg/s)'], [
      row('1 (the old default on 2 cores)', sides[1]),
      row(`default: one per core (${os.availableParallelism()})`, sides[0]),
    ]),
  ].join('\n');
  const reading = `One thread per core accepted ${fmt(dflt.rate)} sends/s against ${fmt(one.rate)} with one thread (${(dflt.rate / one.rate).toFixed(2)}×).`;
  return { text, reading, summary: [] };
}
