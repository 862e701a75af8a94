/**
 * HTTP send intake: autocannon posting the same transactional message to POST
 * /send/transactional (live channel, verified RSA-2048 DKIM domain, delivery disabled so only
 * intake is measured: validation and the fsync'ed commit before the 200; composition and the
 * signature follow it in the finishing stage), against
 * Postfix's SMTP intake of a message of the same size from smtp-source with the same
 * concurrency, in the same run:
 *   - Postfix "intake only": every message goes to the hold queue (no relaying meanwhile);
 *   - Postfix "intake while relaying": the shared bench-postfix.sh (relays to smtp-sink as it
 *     accepts), as the peer README measures it.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { startDns } from './lib/dns.mjs';
import { composedMessage, sendLoad } from './lib/message.mjs';
import { benchPostfix, deleteQueue, postfixCpuMs, setHold, smtpSource } from './lib/postfix.mjs';
import { publishSinkDomains, setupSender, startPostrider } from './lib/postrider.mjs';
import { printProfiles } from './lib/profile.mjs';
import { cpuMs, cpuPerMessage, finished } from './lib/cpu.mjs';
import { best, fmt, ratio, table } from './lib/report.mjs';

export const meta = {
  name: 'http',
  heading: 'HTTP send intake vs Postfix SMTP intake (bench/http-send.mjs)',
  needsPostfix: true,
  options: { n: 3000, c: 20, rounds: 2, profile: false },
  usage: '--n=3000 messages per round, --c=20 connections (HTTP) = sessions (smtp-source), --rounds=2 alternating rounds (best of each side is reported), --profile=false (daemon under node --cpu-prof; top frames of each thread on stderr)',
};

/**
 * autocannon's own duration ends on its once-a-second tick, not at the last response: with
 * `amount` the rate came out quantized (3,000 in 3.01, 4.01 or 5.01 s: 997, 748 or 599 msg/s).
 * The rate here is over the time from the start to the last response.
 */
async function cannon(p, channelId, { amount, connections }) {
  const t0 = performance.now();
  let last = t0;
  const instance = autocannon(sendLoad(p, channelId, { amount, connections }));
  instance.on('response', () => (last = performance.now()));
  const result = await instance;
  const ok = result['2xx'];
  const seconds = (last - t0) / 1000;
  return { ok, bad: result.non2xx + result.errors + result.timeouts, seconds, rate: ok / seconds, p50: result.latency.p50, p99: result.latency.p99 };
}

export async function run({ n, c, rounds, profile }, { progress, peer }) {
  const length = (await composedMessage()).length;
  const dns = await startDns();
  publishSinkDomains(dns, 1);
  let p;
  const profDir = profile ? fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-bench-prof-')) : null;
  const ourRounds = [];
  const heldRounds = [];
  try {
    const nodeArgs = profDir ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : [];
    p = await startPostrider({ POSTRIDER_DNS_SERVERS: dns.address, POSTRIDER_DELIVERY_ENABLED: 'false' }, { nodeArgs });
    const sender = await setupSender(p, dns);
    progress(`postrider up (HTTP ${p.httpPort}); warm-up 500 requests`);
    await cannon(p, sender.channelId, { amount: 500, connections: c });
    await setHold(true);
    await smtpSource({ sessions: c, count: 500, length }); // Postfix warm-up
    await deleteQueue();
    // Alternating rounds, so a load spike from elsewhere hits both sides rather than one.
    for (let r = 1; r <= rounds; r++) {
      progress(`round ${r}/${rounds} postrider: autocannon ${n} requests, ${c} connections`);
      const cpu0 = cpuMs(p.pid);
      const ours = await cannon(p, sender.channelId, { amount: n, connections: c });
      const cpuAck = cpuMs(p.pid);
      // The signatures (and compositions) that follow the 200s finish before Postfix's round starts.
      await finished(p);
      ours.cpu = cpuPerMessage(cpu0, cpuAck, cpuMs(p.pid), ours.ok);
      ourRounds.push(ours);
      progress(`postrider: ${fmt(ours.rate)} msg/s, p50 ${ours.p50} ms, p99 ${ours.p99} ms, ${ours.bad} failed` +
        (ours.cpu ? `; CPU per message: main thread ${fmt(ours.cpu.mainAck, 3)} ms during the round, all threads ${fmt(ours.cpu.total, 3)} ms until finished` : ''));
      progress(`round ${r}/${rounds} Postfix intake only (hold queue): smtp-source -s ${c} -m ${n} -l ${length}`);
      // Postfix's CPU: every process of the instance (smtpd, cleanup, qmgr), until queued.
      const pf0 = postfixCpuMs();
      const heldS = await smtpSource({ sessions: c, count: n, length });
      const pf1 = postfixCpuMs();
      await deleteQueue();
      const pfCpu = pf0 !== null && pf1 !== null ? (pf1 - pf0) / n : null;
      heldRounds.push({ rate: n / heldS, seconds: heldS, cpuMs: pfCpu });
      progress(`Postfix intake only: ${fmt(n / heldS)} msg/s` + (pfCpu !== null ? `; CPU per message: ${fmt(pfCpu, 3)} ms, all processes` : ''));
    }
  } finally {
    await setHold(false);
    await p?.stop(); // the profiles are written when the daemon exits
    await dns.close();
  }
  if (profDir) printProfiles(profDir, progress);
  const ours = best(ourRounds);
  const held = best(heldRounds);
  progress(`Postfix intake while relaying: bench-postfix.sh ${c} ${n} ${length}`);
  const relay = await benchPostfix({ sessions: c, count: n, length, scratch: peer.scratch });
  progress(`Postfix: ${relay.line}`);

  const little = (rate) => (rate > 0 ? `${fmt((c / rate) * 1000, 1)}` : 'n/a');
  const rows = [
    ['postrider HTTP: POST /send/transactional (autocannon)', fmt(ours.rate), ratio(ours.rate, held.rate), `${ours.p50} / ${ours.p99}`, little(ours.rate), `${ours.ok} ok, ${ours.bad} failed` +
      (ours.cpu ? `; CPU ms/message: main thread ${fmt(ours.cpu.mainAck, 3)}, all threads ${fmt(ours.cpu.total, 3)}` : '')],
    ['Postfix SMTP intake only (smtp-source, hold queue)', fmt(held.rate), '1.00×', 'n/a', little(held.rate), `${n} in ${held.seconds.toFixed(2)} s` +
      (held.cpuMs != null ? `; CPU ms/message: ${fmt(held.cpuMs, 3)} (all processes, until queued)` : '')],
    ['Postfix SMTP intake while relaying (bench-postfix.sh)', fmt(relay.ingestRate), ratio(relay.ingestRate, held.rate), 'n/a', little(relay.ingestRate), `e2e ${fmt(relay.e2eRate)} msg/s, sink got ${relay.got}`],
    ...(rounds > 1
      ? [['all rounds, postrider / Postfix intake only (msg/s)', ourRounds.map((r) => fmt(r.rate)).join(', '), '', '', '', heldRounds.map((r) => fmt(r.rate)).join(', ')]]
      : []),
  ];
  const text = [
    `What is compared: ${fmt(n)} messages per round, ${c} concurrent clients, ${rounds} alternating round(s) of ` +
      `postrider then Postfix; the best round of each side is shown. postrider: HTTP/JSON requests to a live channel with a ` +
      `verified RSA-2048 DKIM domain, delivery disabled; each 200 means validated and committed with fsync; the ` +
      `message (multipart/alternative, ${fmt(length)} bytes before the signature) is composed and DKIM-signed after the 200 (finishing stage). Postfix: ` +
      `smtp-source sessions on 127.0.0.1:2526 (no TLS, no AUTH, no signing) sending a ${fmt(length)}-byte body; each 250 ` +
      'means queued on disk (Postfix fsyncs queue files). Rates are accepted messages/s; latency per request from ' +
      `autocannon; "mean" is ${c} / rate (Little's law), the only latency smtp-source allows.`,
    '',
    table(['intake', 'msg/s', 'ratio to Postfix intake only', 'p50 / p99 ms', 'mean ms', 'notes'], rows),
  ].join('\n');
  const reading =
    `postrider accepted ${fmt(ours.rate)} HTTP sends/s, ${ratio(ours.rate, held.rate)} Postfix's SMTP intake of a message ` +
    `of the same size (${fmt(held.rate)} msg/s into the hold queue; ${fmt(relay.ingestRate)} msg/s while relaying). ` +
    'Postfix does less per message here (no JSON, no MIME composition, no DKIM signature) and postrider does less ' +
    'protocol work (one HTTP request instead of an SMTP dialogue). The 200 waits for validation and the group ' +
    'commit only; MIME composition and the DKIM signature are made after it (finishing stage, worker pool at a lower ' +
    'priority than the main thread), on the same two cores, so they still compete for CPU during the run.' +
    (ours.cpu && held.cpuMs != null
      ? ` CPU per message: postrider ${fmt(ours.cpu.total, 3)} ms over all its threads until composed and signed (${fmt(ours.cpu.mainAck, 3)} on the main thread), ` +
        `Postfix ${fmt(held.cpuMs, 3)} ms over all its processes until queued (the load generators are apart).`
      : '');
  return {
    text,
    reading,
    summary: [
      { measure: `HTTP send vs SMTP intake (${c} clients, msg/s)`, postrider: fmt(ours.rate), postfix: fmt(held.rate), ratio: ratio(ours.rate, held.rate) },
      ...(ours.cpu && held.cpuMs != null
        ? [{ measure: 'HTTP send: server CPU ms per message (postrider until signed, Postfix until queued)', postrider: fmt(ours.cpu.total, 3), postfix: fmt(held.cpuMs, 3), ratio: ratio(ours.cpu.total, held.cpuMs) }]
        : []),
      { measure: `HTTP send latency p50 / p99 (ms); Postfix: mean from Little's law`, postrider: `${ours.p50} / ${ours.p99}`, postfix: `${little(held.rate)} (mean)`, ratio: `${ratio(c / ours.rate, c / held.rate)} (mean / mean)` },
    ],
  };
}
