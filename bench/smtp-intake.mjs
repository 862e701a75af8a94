/**
 * Authenticated SMTP submission intake: one client (nodemailer, pooled, STARTTLS + AUTH PLAIN)
 * sends the same message with the same concurrency to postrider's submission listener and to
 * Postfix's submission service (127.0.0.1:2587, Cyrus sasldb), in the same run. Intake only:
 * postrider's delivery is disabled and Postfix puts every message on hold, so neither relays
 * meanwhile. A 250 means committed to disk on both (postrider DKIM-signs after it, on the same cores).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cpuMs, cpuPerMessage, finished, writtenBytes } from './lib/cpu.mjs';
import { startDns } from './lib/dns.mjs';
import { composedMessage, FROM, TO } from './lib/message.mjs';
import { deleteQueue, POSTFIX_PASSWORD, POSTFIX_SUBMISSION_PORT, POSTFIX_USER, postfixCpuMs, setHold } from './lib/postfix.mjs';
import { publishSinkDomains, setupSender, startPostrider } from './lib/postrider.mjs';
import { printProfiles } from './lib/profile.mjs';
import { best, fmt, ratio, table } from './lib/report.mjs';
import { submissionLoad } from './lib/smtp-load.mjs';

export const meta = {
  name: 'smtp',
  heading: 'SMTP submission intake, authenticated, vs Postfix submission (bench/smtp-intake.mjs)',
  needsPostfix: true,
  options: { n: 3000, c: 20, rounds: 2, profile: false, fresh: false },
  usage: '--n=3000 messages per round, --c=20 connections (same for both servers), --rounds=2 alternating rounds (best of each side is reported), --profile=false (daemon under node --cpu-prof; top frames of each thread on stderr), --fresh=false (true: a new connection per message, TCP + STARTTLS + AUTH each time, instead of the pool; use with --no-write, the section describes the pool)',
};

export async function run({ n, c, rounds, profile, fresh }, { progress }) {
  const raw = await composedMessage();
  const common = { count: n, connections: c, raw, from: FROM.email, to: TO.email, pool: !fresh, onProgress: (k) => progress(`  ${k} sent`) };
  const dns = await startDns();
  publishSinkDomains(dns, 1);
  let p;
  const profDir = profile ? fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-bench-prof-')) : null;
  const ourRounds = [];
  const theirRounds = [];
  await setHold(true);
  try {
    const nodeArgs = profDir ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : [];
    p = await startPostrider({ POSTRIDER_DNS_SERVERS: dns.address, POSTRIDER_DELIVERY_ENABLED: 'false' }, { nodeArgs });
    const sender = await setupSender(p, dns);
    const ourAuth = { port: p.smtpPort, user: sender.channelId, pass: p.apiKey };
    const theirAuth = { port: POSTFIX_SUBMISSION_PORT, user: POSTFIX_USER, pass: POSTFIX_PASSWORD };
    progress(`postrider up (SMTP ${p.smtpPort}); warm-up 200 messages to each server`);
    await submissionLoad({ ...ourAuth, ...common, count: 200, onProgress: undefined });
    await submissionLoad({ ...theirAuth, ...common, count: 200, onProgress: undefined });
    await deleteQueue();
    await finished(p);
    // Alternating rounds, so a load spike from elsewhere hits both sides rather than one.
    for (let r = 1; r <= rounds; r++) {
      progress(`round ${r}/${rounds} postrider: ${n} messages over ${c} authenticated STARTTLS connections`);
      const cpu0 = cpuMs(p.pid);
      const written0 = writtenBytes(p.pid);
      const ours = await submissionLoad({ ...ourAuth, ...common });
      const cpuAck = cpuMs(p.pid);
      // The signatures that follow the 250s finish before Postfix's round starts.
      await finished(p);
      ours.cpu = cpuPerMessage(cpu0, cpuAck, cpuMs(p.pid), ours.sent);
      const written1 = writtenBytes(p.pid);
      ours.kibWritten = written0 !== null && written1 !== null && ours.sent > 0 ? (written1 - written0) / ours.sent / 1024 : null;
      ourRounds.push(ours);
      progress(`postrider: ${fmt(ours.rate)} msg/s, p50 ${ours.p50.toFixed(1)} ms, p99 ${ours.p99.toFixed(1)} ms, ${ours.failed} failed ${ours.firstError ?? ''}` +
        (ours.cpu ? `; CPU per message: main thread ${fmt(ours.cpu.mainAck, 3)} ms during the round, all threads ${fmt(ours.cpu.total, 3)} ms until signed` : '') +
        `; client ${fmt(ours.clientCpuMs, 3)} ms per message, ${fmt(100 * ours.clientBusy, 0)}% of a core` +
        (ours.kibWritten != null ? `; ${fmt(ours.kibWritten, 1)} KiB written to storage per message until signed` : ''));
      progress(`round ${r}/${rounds} Postfix submission: ${n} messages over ${c} authenticated STARTTLS connections (hold queue)`);
      // Postfix's CPU: every process of the instance (smtpd with its SASL and TLS, cleanup, qmgr), until queued.
      const pf0 = postfixCpuMs();
      const theirs = await submissionLoad({ ...theirAuth, ...common });
      const pf1 = postfixCpuMs();
      theirs.cpuMs = pf0 !== null && pf1 !== null && theirs.sent > 0 ? (pf1 - pf0) / theirs.sent : null;
      theirRounds.push(theirs);
      await deleteQueue();
      progress(`Postfix: ${fmt(theirs.rate)} msg/s, p50 ${theirs.p50.toFixed(1)} ms, p99 ${theirs.p99.toFixed(1)} ms, ${theirs.failed} failed ${theirs.firstError ?? ''}` +
        (theirs.cpuMs !== null ? `; CPU per message: ${fmt(theirs.cpuMs, 3)} ms, all processes` : '') +
        `; client ${fmt(theirs.clientCpuMs, 3)} ms per message, ${fmt(100 * theirs.clientBusy, 0)}% of a core`);
    }
  } finally {
    await p?.stop(); // the profiles are written when the daemon exits
    await dns.close();
    await deleteQueue();
    await setHold(false);
  }
  if (profDir) printProfiles(profDir, progress);
  const ours = best(ourRounds);
  const theirs = best(theirRounds);

  const cpuNote = (r) =>
    r.cpu ? `; CPU ms/message: main thread ${fmt(r.cpu.mainAck, 3)}, all threads ${fmt(r.cpu.total, 3)} (until signed)` : r.cpuMs != null ? `; CPU ms/message: ${fmt(r.cpuMs, 3)} (all processes, until queued)` : '';
  const row = (name, r) => [name, fmt(r.rate), ratio(r.rate, theirs.rate), fmt(r.p50, 1), fmt(r.p99, 1), `${r.sent} ok, ${r.failed} failed${cpuNote(r)}`];
  const text = [
    `What is compared: ${rounds} alternating round(s) of ${fmt(n)} messages to postrider then to Postfix (the best ` +
      `round of each side is shown), ${fmt(raw.length)}-byte messages (the MIME postrider composes for the HTTP ` +
      `benchmark's message), ${c} pooled connections of one client (nodemailer SMTP pool, STARTTLS with a ` +
      'self-signed certificate, AUTH PLAIN, a new message as soon as the previous one got its 250), against ' +
      "postrider's submission listener (AUTH with channel id + API key; the message is checked and committed before " +
      'the 250 and DKIM-signed with RSA-2048 after it, on the same cores; delivery disabled) and Postfix\'s submission service on 127.0.0.1:2587 ' +
      '(Cyrus sasldb AUTH; cleanup queues the message; hold queue, so nothing is relayed meanwhile). The pool opens ' +
      `its ${c} connections (TCP, STARTTLS, AUTH) inside the timed window, amortized over the ${fmt(n)} messages; ` +
      'latency is per message, from sendMail to its 250.',
    '',
    table(['server', 'msg/s', 'ratio to Postfix', 'p50 ms', 'p99 ms', 'result'], [
      row('postrider submission', ours),
      row('Postfix submission (hold queue)', theirs),
      ...(rounds > 1 ? [['all rounds, postrider / Postfix (msg/s)', ourRounds.map((r) => fmt(r.rate)).join(', '), '', '', '', theirRounds.map((r) => fmt(r.rate)).join(', ')]] : []),
      ...(ourRounds.every((r) => r.cpu)
        ? [['postrider CPU ms per message, main thread during the round / all threads until signed, each round (/proc)', ourRounds.map((r) => `${fmt(r.cpu.mainAck, 3)} / ${fmt(r.cpu.total, 3)}`).join(', '), '', '', '', '']]
        : []),
      // What the data file's commits cost the disk: LMDB writes every page a commit touched.
      ...(ourRounds.every((r) => r.kibWritten != null)
        ? [['postrider KiB written to storage per message until signed, each round (/proc/PID/io write_bytes)', ourRounds.map((r) => fmt(r.kibWritten, 1)).join(', '), '', '', '', '']]
        : []),
      ...(theirRounds.every((r) => r.cpuMs != null)
        ? [['Postfix CPU ms per message, all its processes until queued, each round (/proc)', '', '', '', '', theirRounds.map((r) => fmt(r.cpuMs, 3)).join(', ')]]
        : []),
      // The client shares the two cores with the server; its own CPU shows what is left to either side.
      ['load generator (this process) CPU ms per message, each round', ourRounds.map((r) => fmt(r.clientCpuMs, 3)).join(', '), '', '', '', theirRounds.map((r) => fmt(r.clientCpuMs, 3)).join(', ')],
    ]),
  ].join('\n');
  const reading =
    `Over the same authenticated TLS sessions postrider accepted ${fmt(ours.rate)} msg/s, ${ratio(ours.rate, theirs.rate)} ` +
    `Postfix's ${fmt(theirs.rate)} msg/s (p50 ${fmt(ours.p50, 1)} ms vs ${fmt(theirs.p50, 1)} ms). The client runs on ` +
    'the same two cores for both. postrider DKIM-signs every message (RSA-2048, in its worker threads) after the ' +
    'commit, during the round, which Postfix does not do (DKIM section).' +
    (ours.cpu && theirs.cpuMs != null
      ? ` CPU per message: postrider ${fmt(ours.cpu.total, 3)} ms over all its threads until signed (${fmt(ours.cpu.mainAck, 3)} on the main thread), ` +
        `Postfix ${fmt(theirs.cpuMs, 3)} ms over all its processes until queued (${ratio(ours.cpu.total, theirs.cpuMs)}; the load generator is apart).`
      : '');
  return {
    text,
    reading,
    summary: [
      { measure: `SMTP submission, AUTH+STARTTLS, ${c} connections (msg/s)`, postrider: fmt(ours.rate), postfix: fmt(theirs.rate), ratio: ratio(ours.rate, theirs.rate) },
      ...(ours.cpu && theirs.cpuMs != null
        ? [{ measure: 'SMTP submission: server CPU ms per message (postrider until signed, Postfix until queued)', postrider: fmt(ours.cpu.total, 3), postfix: fmt(theirs.cpuMs, 3), ratio: ratio(ours.cpu.total, theirs.cpuMs) }]
        : []),
      { measure: 'SMTP submission p50 / p99 latency (ms)', postrider: `${fmt(ours.p50, 1)} / ${fmt(ours.p99, 1)}`, postfix: `${fmt(theirs.p50, 1)} / ${fmt(theirs.p99, 1)}`, ratio: `${ratio(ours.p50, theirs.p50)} / ${ratio(ours.p99, theirs.p99)}` },
    ],
  };
}
