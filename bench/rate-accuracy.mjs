/**
 * The default 50/s alone, measured at the sink, several times in a row (issue 36: "hold the mean
 * at ≥ 49/s with no second over 50"): M messages queued with delivery off, the daemon restarted
 * with the default delivery.rate, arrivals timed by the sink. The same run as the second part
 * of bench/delivery.mjs, without its Postfix rounds, so it can be repeated under load.
 *
 *   npm run build && node bench/rate-accuracy.mjs [M=500] [RUNS=3]
 */
import { startDns } from './lib/dns.mjs';
import { FROM, HTML, SUBJECT, TEXT } from './lib/message.mjs';
import { publishSinkDomains, setupSender, startPostrider } from './lib/postrider.mjs';
import { arrivalStats, SINK_PORT, startSink } from './lib/sink.mjs';
import os from 'node:os';

const m = Number(process.argv[2] ?? 500);
const runs = Number(process.argv[3] ?? 3);
const env = (dns, extra) => ({ POSTRIDER_DNS_SERVERS: dns.address, POSTRIDER_DELIVERY_PORT: String(SINK_PORT), ...extra });

async function queue(p, channelId, domains, offset) {
  let next = 0;
  const headers = { authorization: `Bearer ${p.apiKey}`, 'content-type': 'application/json', 'x-service-channel-id': channelId };
  const worker = async () => {
    while (next < m) {
      const i = offset + next++;
      const body = JSON.stringify({ from: FROM, to: [{ email: `user${i}@${domains[i % domains.length]}` }], subject: SUBJECT, text: TEXT, html: HTML });
      const res = await fetch(`${p.url}/send/transactional`, { method: 'POST', headers, body });
      if (res.status !== 200) throw new Error(`queueing: HTTP ${res.status} ${await res.text()}`);
      await res.arrayBuffer();
    }
  };
  await Promise.all(Array.from({ length: 20 }, worker));
}

const dns = await startDns();
const domains = publishSinkDomains(dns, 10);
const sink = await startSink();
let p = await startPostrider(env(dns, { POSTRIDER_DELIVERY_ENABLED: 'false' }));
try {
  const { channelId } = await setupSender(p, dns);
  for (let r = 0; r < runs; r++) {
    p = await p.restart(env(dns, { POSTRIDER_DELIVERY_ENABLED: 'false' }));
    await queue(p, channelId, domains, r * m);
    sink.reset();
    const load = os.loadavg()[0].toFixed(1);
    p = await p.restart(env(dns, {}));
    await sink.waitFor(m, 240_000);
    const s = arrivalStats(sink.times.slice(0, m));
    process.stdout.write(`run ${r + 1}: ${m} messages, mean ${s.rate.toFixed(2)} msg/s, max ${s.maxWindow} in any 1 s window, per second ${s.perSecond.join(', ')} (load ${load})\n`);
  }
} finally {
  await p.stop();
  await dns.close();
  await sink.stop();
}
