/**
 * SMTP abuse at scale against `postrider serve` (child process), on loopback:
 *
 *  1. 400 connections kept open from one address (127.0.66.1), half idle, half trickling a byte
 *     every 5 s, each reopened as soon as it is refused or cut, while legitimate clients on
 *     127.0.0.2 and 127.0.0.3 submit one message per new connection: every one must get its 250.
 *  2. The same from 30 addresses (127.0.77.x, 20 each, more than the listener's unauthenticated
 *     room): the authenticated sessions already open keep submitting, and a legitimate client
 *     on 127.0.0.5 still gets in on new connections (it takes the slot of an address holding
 *     more unauthenticated sessions).
 *  3. A 1 GiB message against the default 25 MiB limit: 552 5.3.4, the daemon's RSS sampled.
 *
 * SOAK_SMTP_SECONDS (default 60) sets the length of phase 1 (phase 2 runs half as long),
 * SOAK_SMTP_OVERSIZED_MIB (default 1024) the size of phase 3.
 */
import fs from 'node:fs';
import net from 'node:net';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChildDaemon } from '../support/child-daemon.js';
import { startDnsServer, type TestDns } from '../support/dns-server.js';
import { errorLogLines } from '../support/fuzz/target.js';
import { setupSender, type Sender } from '../support/sending.js';
import { SmtpWire } from '../support/smtp-wire.js';

const SECONDS = Number(process.env.SOAK_SMTP_SECONDS ?? 60);
const OVERSIZED_MIB = Number(process.env.SOAK_SMTP_OVERSIZED_MIB ?? 1024);
const MiB = 1024 * 1024;

let dns: TestDns;
let d: ChildDaemon;
let s: Sender;

beforeAll(async () => {
  dns = await startDnsServer();
  d = new ChildDaemon({ env: { POSTRIDER_SMTP_ENABLED: 'true', POSTRIDER_DNS_SERVERS: dns.address, POSTRIDER_SMTP_AUTH_TIMEOUT_MS: '5s' } });
  await d.start();
  s = await setupSender(d, dns, { deliveryType: 'sandbox' });
}, 60_000);

afterAll(async () => {
  await d?.close();
  await dns?.close();
});

function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : 0;
}

/** Keeps `count` connections from `address` open until `until`, reopening each one that ends. */
function flood(address: string, count: number, until: number, tally: Record<string, number>): Promise<void>[] {
  return Array.from({ length: count }, async (_, i) => {
    while (Date.now() < until) {
      const sock = net.connect({ port: d.smtpPort, host: '127.0.0.1', localAddress: address });
      sock.on('error', () => undefined);
      let first = '';
      sock.setEncoding('latin1');
      sock.on('data', (c: string) => {
        if (!first) first = c.slice(0, 9);
      });
      const trickle = i % 2 ? setInterval(() => sock.writable && sock.write('N'), 5000) : undefined;
      const stop = setTimeout(() => sock.destroy(), Math.max(0, until - Date.now()));
      await once(sock, 'close');
      clearInterval(trickle);
      clearTimeout(stop);
      tally[first || '(none)'] = (tally[first || '(none)'] ?? 0) + 1;
      if (!first.startsWith('220')) await new Promise((r) => setTimeout(r, 1000)); // refused: back off a little
    }
  });
}

async function submitOn(c: SmtpWire, i: number): Promise<boolean> {
  if ((await c.cmd(`MAIL FROM:<app@${s.domain}>`))?.code !== 250) return false;
  if ((await c.cmd('RCPT TO:<ann@example.net>'))?.code !== 250) return false;
  const r = await c.data(`From: <app@${s.domain}>\r\nTo: <ann@example.net>\r\nSubject: soak ${i}\r\n\r\nmessage ${i}\r\n`);
  return r?.code === 250;
}

/** One message per new connection from `address` until `until`; results and latencies. */
async function legitLoop(address: string, until: number) {
  const out = { ok: 0, failed: [] as string[], ms: [] as number[] };
  for (let i = 0; Date.now() < until; i++) {
    const started = performance.now();
    let ok = false;
    try {
      const c = await SmtpWire.connect(d.smtpPort, { localAddress: address, timeoutMs: 5000 });
      const auth = await c.login(s.channelId, d.apiKey);
      ok = auth?.code === 235 && (await submitOn(c, i));
      await c.quit();
      if (!ok) out.failed.push(auth?.text ?? '(closed)');
    } catch (err) {
      out.failed.push(String(err));
    }
    out.ms.push(performance.now() - started);
    if (ok) out.ok++;
    else await new Promise((r) => setTimeout(r, 200)); // a refused client retries after a pause
  }
  return out;
}

const p = (list: number[], q: number) => [...list].sort((a, b) => a - b)[Math.min(list.length - 1, Math.floor(list.length * q))] ?? 0;

describe('SMTP abuse soak', () => {
  it(`serves legitimate clients while one address keeps 400 connections open for ${SECONDS} s`, async () => {
    const until = Date.now() + SECONDS * 1000;
    const tally: Record<string, number> = {};
    const attackers = flood('127.0.66.1', 400, until, tally);
    const legit = await Promise.all([legitLoop('127.0.0.2', until), legitLoop('127.0.0.3', until)]);
    await Promise.all(attackers);
    const ok = legit.reduce((n, l) => n + l.ok, 0);
    const failed = legit.flatMap((l) => l.failed);
    const ms = legit.flatMap((l) => l.ms);
    console.log(`[smtp flood, one address] ${ok} legitimate submissions, ${failed.length} failed, p50 ${p(ms, 0.5).toFixed(0)} ms, p99 ${p(ms, 0.99).toFixed(0)} ms, max ${Math.max(...ms).toFixed(0)} ms; attacker connections by first reply: ${JSON.stringify(tally)}; RSS ${rssMiB(d.pid).toFixed(0)} MiB`);
    expect(failed).toEqual([]);
    expect(ok).toBeGreaterThan(SECONDS);
    expect(p(ms, 0.99)).toBeLessThan(2000);
    expect(d.alive).toBe(true);
  });

  it('keeps authenticated sessions submitting while 30 addresses fill the unauthenticated room', async () => {
    const pool = await Promise.all(Array.from({ length: 4 }, () => SmtpWire.connect(d.smtpPort, { localAddress: '127.0.0.4' })));
    for (const c of pool) expect((await c.login(s.channelId, d.apiKey))?.code).toBe(235);
    const until = Date.now() + (SECONDS / 2) * 1000;
    const tally: Record<string, number> = {};
    const attackers = Array.from({ length: 30 }, (_, i) => flood(`127.0.77.${i + 1}`, 20, until, tally)).flat();
    const pooled = { ok: 0, failed: 0 };
    const fresh = legitLoop('127.0.0.5', until);
    await Promise.all(
      pool.map(async (c) => {
        for (let i = 0; Date.now() < until; i++) {
          if (await submitOn(c, i)) pooled.ok++;
          else pooled.failed++;
          await new Promise((r) => setTimeout(r, 50));
        }
      }),
    );
    const newConnections = await fresh;
    await Promise.all(attackers);
    for (const c of pool) await c.quit();
    console.log(
      `[smtp flood, 30 addresses] pooled sessions: ${pooled.ok} submitted, ${pooled.failed} failed; new legitimate connections: ${newConnections.ok} submitted, ${newConnections.failed.length} failed, p99 ${p(newConnections.ms, 0.99).toFixed(0)} ms; attacker connections by first reply: ${JSON.stringify(tally)}`,
    );
    expect(pooled.failed).toBe(0);
    expect(pooled.ok).toBeGreaterThan(SECONDS);
    expect(newConnections.failed).toEqual([]);
    expect(newConnections.ok).toBeGreaterThan(SECONDS / 4);
    expect(d.alive).toBe(true);
  });

  it(`drains a ${OVERSIZED_MIB} MiB message over the 25 MiB limit with bounded memory and answers 552 5.3.4`, async () => {
    const c = await SmtpWire.connect(d.smtpPort);
    expect((await c.login(s.channelId, d.apiKey))?.code).toBe(235);
    expect((await c.cmd(`MAIL FROM:<app@${s.domain}>`))?.code).toBe(250);
    expect((await c.cmd('RCPT TO:<ann@example.net>'))?.code).toBe(250);
    expect((await c.cmd('DATA'))?.code).toBe(354);
    const before = rssMiB(d.pid);
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, rssMiB(d.pid))), 100);
    const chunk = Buffer.from(('x'.repeat(126) + '\r\n').repeat(MiB / 128), 'latin1');
    const started = performance.now();
    c.write(`From: <app@${s.domain}>\r\nSubject: huge\r\n\r\n`);
    for (let sent = 0; sent < OVERSIZED_MIB * MiB; sent += chunk.length) {
      if (!c.socket.write(chunk)) await once(c.socket, 'drain');
    }
    c.write('.\r\n');
    const reply = await c.reply(600_000);
    clearInterval(sampler);
    const seconds = (performance.now() - started) / 1000;
    console.log(`[smtp oversized] ${OVERSIZED_MIB} MiB in ${seconds.toFixed(1)} s: daemon RSS ${before.toFixed(0)} MiB before, ${peak.toFixed(0)} MiB at peak; reply ${reply?.text}`);
    expect(reply?.text).toMatch(/^552 5\.3\.4 /);
    expect(peak - before).toBeLessThan(150);
    await c.quit();
    expect(errorLogLines(d.stdout)).toEqual([]);
    expect(d.alive).toBe(true);
  });
});
