/**
 * One authenticated SMTP submission connection at a time, each command timed from the client's
 * write to the server's reply: MAIL FROM, RCPT TO, DATA (to the 354) and the body (to the 250), the
 * median of `--n` messages after the first 50, against postrider's submission listener and Postfix's
 * submission service (127.0.0.1:2587) alternately, `--rounds` times. Where SMTP intake's latency
 * goes when nothing queues: at 20 connections a message's latency is this plus the waits for the
 * shared main thread and the group commit (bench/RESULTS.md, issue 36).
 *
 * The same raw dialogue for both (EHLO, STARTTLS, EHLO, AUTH PLAIN, then the transactions); the
 * certificate is not checked. Intake only: postrider's delivery is disabled and Postfix holds.
 *
 *   npm run build && PEERS=... postfix start && node bench/smtp-phases.mjs [--n=400] [--rounds=2] [--profile=DIR]
 *
 * --profile=DIR runs the daemon under node --cpu-prof (its profiles are written to DIR at its exit).
 */
import net from 'node:net';
import tls from 'node:tls';
import { startDns } from './lib/dns.mjs';
import { composedMessage, FROM, TO } from './lib/message.mjs';
import { deleteQueue, POSTFIX_PASSWORD, POSTFIX_SUBMISSION_PORT, POSTFIX_USER, setHold } from './lib/postfix.mjs';
import { publishSinkDomains, setupSender, startPostrider } from './lib/postrider.mjs';

const args = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=')).map(([k, v]) => [k, v ?? 'true']));
const N = Number(args.n ?? 400);
const ROUNDS = Number(args.rounds ?? 2);
const WARM = 50;

/** A reader of final reply lines ("250 ...", not "250-..."): each call resolves with the next one. */
function replies(sock) {
  let buf = '';
  const waiters = [];
  const lines = [];
  sock.on('data', (d) => {
    buf += d.toString('latin1');
    for (let i = buf.indexOf('\r\n'); i >= 0; i = buf.indexOf('\r\n')) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 2);
      if (!/^\d{3} /.test(line)) continue;
      const w = waiters.shift();
      if (w) w(line);
      else lines.push(line);
    }
  });
  return () => (lines.length > 0 ? Promise.resolve(lines.shift()) : new Promise((r) => waiters.push(r)));
}

async function expect(next, code, what) {
  const line = await next();
  if (!line.startsWith(code)) throw new Error(`${what}: ${line}`);
}

async function session({ port, user, pass }, body) {
  const plain = net.connect(port, '127.0.0.1');
  let next = replies(plain);
  await expect(next, '220', 'greeting');
  plain.write('EHLO probe.bench\r\n');
  await expect(next, '250', 'EHLO');
  plain.write('STARTTLS\r\n');
  await expect(next, '220', 'STARTTLS');
  plain.removeAllListeners('data');
  const sock = tls.connect({ socket: plain, rejectUnauthorized: false });
  next = replies(sock);
  sock.write('EHLO probe.bench\r\n');
  await expect(next, '250', 'EHLO after STARTTLS');
  sock.write(`AUTH PLAIN ${Buffer.from(`\0${user}\0${pass}`).toString('base64')}\r\n`);
  await expect(next, '235', 'AUTH');
  const times = { mail: [], rcpt: [], data: [], body: [] };
  const step = async (part, line, code) => {
    const s = performance.now();
    sock.write(line);
    await expect(next, code, part);
    times[part].push(performance.now() - s);
  };
  for (let i = 0; i < N + WARM; i++) {
    await step('mail', `MAIL FROM:<${FROM.email}>\r\n`, '250');
    await step('rcpt', `RCPT TO:<${TO.email}>\r\n`, '250');
    await step('data', 'DATA\r\n', '354');
    await step('body', body, '250');
  }
  sock.end('QUIT\r\n');
  const median = (a) => a.slice(WARM).sort((x, y) => x - y)[Math.floor(N / 2)];
  return Object.fromEntries(Object.entries(times).map(([k, v]) => [k, median(v)]));
}

const raw = (await composedMessage()).toString('latin1').replace(/\r?\n/g, '\r\n');
// RFC 5321 4.5.2: a line starting with "." is sent with one more.
const body = raw.replace(/^\./gm, '..') + (raw.endsWith('\r\n') ? '' : '\r\n') + '.\r\n';
const dns = await startDns();
publishSinkDomains(dns, 1);
await setHold(true);
const p = await startPostrider({ POSTRIDER_DNS_SERVERS: dns.address, POSTRIDER_DELIVERY_ENABLED: 'false' }, args.profile ? { nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${args.profile}`] } : {});
try {
  const sender = await setupSender(p, dns);
  const sides = [
    ['postrider', { port: p.smtpPort, user: sender.channelId, pass: p.apiKey }],
    ['Postfix', { port: POSTFIX_SUBMISSION_PORT, user: POSTFIX_USER, pass: POSTFIX_PASSWORD }],
  ];
  console.log(`| round | server | MAIL FROM ms | RCPT TO ms | DATA ms | body to 250 ms | a message, ms |`);
  console.log(`|---|---|---|---|---|---|---|`);
  for (let r = 1; r <= ROUNDS; r++) {
    for (const [name, auth] of sides) {
      const t = await session(auth, body);
      const sum = t.mail + t.rcpt + t.data + t.body;
      console.log(`| ${r} | ${name} | ${t.mail.toFixed(2)} | ${t.rcpt.toFixed(2)} | ${t.data.toFixed(2)} | ${t.body.toFixed(2)} | ${sum.toFixed(2)} |`);
    }
  }
} finally {
  await deleteQueue();
  await p.stop();
  await dns.close();
}
