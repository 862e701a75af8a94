/**
 * SMTP connection exhaustion, on loopback with the real listener in-process: one address
 * (127.0.0.1, or 127.0.0.3 for AUTH guessing) holding or trickling hundreds of connections
 * must not lock out a legitimate client on another loopback address (127.0.0.2).
 */
import net from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import { startDnsServer, type TestDns } from '../support/dns-server.js';
import { setupSender, type Sender } from '../support/sending.js';
import { SmtpWire } from '../support/smtp-wire.js';

const ATTACKER = '127.0.0.1';
const LEGIT = '127.0.0.2';

let dns: TestDns;
const daemons: TestDaemon[] = [];
const sockets: net.Socket[] = [];
const timers: NodeJS.Timeout[] = [];

beforeAll(async () => {
  dns = await startDnsServer();
});

afterEach(async () => {
  for (const t of timers.splice(0)) clearInterval(t);
  for (const s of sockets.splice(0)) s.destroy();
  for (const d of daemons.splice(0)) await d.stop();
});

afterAll(async () => {
  await dns?.close();
});

async function daemonWith(overrides: Record<string, unknown> = {}): Promise<{ t: TestDaemon; s: Sender; port: number }> {
  const t = await startDaemon({ 'dns.servers': [dns.address], 'smtp.enabled': true, 'smtp.port': 0, 'smtp.host': '127.0.0.1', ...overrides });
  daemons.push(t);
  const s = await setupSender(t, dns, { deliveryType: 'sandbox' });
  return { t, s, port: t.daemon.smtp!.port };
}

/** Opens a connection and resolves with its first line: the greeting or a refusal ('' if closed). */
function firstLine(port: number, localAddress: string): Promise<{ sock: net.Socket; line: string }> {
  return new Promise((resolve) => {
    const sock = net.connect({ port, host: '127.0.0.1', localAddress });
    sockets.push(sock);
    let buf = '';
    sock.setEncoding('latin1');
    sock.on('error', () => undefined);
    const onData = (d: string) => {
      buf += d;
      const eol = buf.indexOf('\r\n');
      if (eol < 0) return;
      sock.off('data', onData);
      sock.on('data', () => undefined);
      resolve({ sock, line: buf.slice(0, eol) });
    };
    sock.on('data', onData);
    sock.once('close', () => resolve({ sock, line: '' }));
  });
}

/** Sockets of `lines` that got the greeting, and the refusals by reply line prefix. */
function tally(results: { sock: net.Socket; line: string }[]) {
  const held = results.filter((r) => r.line.startsWith('220 ')).map((r) => r.sock);
  const refusals: Record<string, number> = {};
  for (const r of results) if (!r.line.startsWith('220 ')) refusals[r.line.slice(0, 9)] = (refusals[r.line.slice(0, 9)] ?? 0) + 1;
  return { held, refusals };
}

async function submit(port: number, s: Sender, key: string, localAddress = LEGIT): Promise<string> {
  const c = await SmtpWire.connect(port, { localAddress });
  try {
    const auth = await c.login(s.channelId, key);
    if (auth?.code !== 235) return auth?.text ?? '(closed at AUTH)';
    expect((await c.cmd(`MAIL FROM:<app@${s.domain}>`))?.code).toBe(250);
    expect((await c.cmd('RCPT TO:<ann@example.net>'))?.code).toBe(250);
    const r = await c.data(`From: <app@${s.domain}>\r\nTo: <ann@example.net>\r\nSubject: still here\r\n\r\nhello\r\n`);
    return r?.text ?? '(closed)';
  } finally {
    await c.quit();
  }
}

describe('SMTP connection limits', () => {
  it('lets a legitimate client submit while one address opens 520 idle and trickling connections', async () => {
    const { t, s, port } = await daemonWith();
    const results = await Promise.all(Array.from({ length: 520 }, () => firstLine(port, ATTACKER)));
    const { held, refusals } = tally(results);
    // Half of what got in sits idle, half trickles a byte every second to defeat idle timeouts.
    held.forEach((sock, i) => i % 2 && timers.push(setInterval(() => sock.writable && sock.write('N'), 1000)));
    expect(held).toHaveLength(50);
    expect(refusals).toEqual({ '421 4.7.0': 470 });
    expect(results.find((r) => r.line.startsWith('421'))!.line).toMatch(/Too many connections from your address/);

    const started = performance.now();
    expect(await submit(port, s, t.apiKey)).toMatch(/^250 2\.0\.0 Ok: queued as /);
    expect(performance.now() - started).toBeLessThan(3000);
  });

  it('closes a connection that trickles bytes but never authenticates at the AUTH deadline, and keeps an idle authenticated one', async () => {
    const { t, s, port } = await daemonWith({ 'smtp.authTimeoutMs': 1000 });
    const authed = await SmtpWire.connect(port, { localAddress: LEGIT });
    expect((await authed.login(s.channelId, t.apiKey))?.code).toBe(235);
    const slow = await SmtpWire.connect(port, { localAddress: ATTACKER });
    expect((await slow.reply())?.code).toBe(220);
    const started = performance.now();
    timers.push(setInterval(() => slow.write('E'), 200));
    const cut = await slow.reply(5000);
    expect(cut?.text).toMatch(/^421 4\.7\.0 Authentication not completed in time/);
    expect(performance.now() - started).toBeLessThan(2500);
    // The authenticated session was idle as long, and is still served.
    expect((await authed.cmd('NOOP'))?.code).toBe(250);
    await authed.quit();
  });

  it('keeps room for authenticated sessions and for newcomers when unauthenticated connections fill the listener', async () => {
    const { t, s, port } = await daemonWith({
      'smtp.maxConnections': 30,
      'smtp.authenticatedReserve': 10,
      'smtp.maxConnectionsPerAddress': 1000,
    });
    const pool = await Promise.all(Array.from({ length: 5 }, () => SmtpWire.connect(port, { localAddress: LEGIT })));
    for (const c of pool) expect((await c.login(s.channelId, t.apiKey))?.code).toBe(235);

    const flood = await Promise.all(Array.from({ length: 40 }, () => firstLine(port, ATTACKER)));
    const { held, refusals } = tally(flood);
    expect(held).toHaveLength(20); // 30 in all, 10 kept for authenticated sessions
    expect(refusals).toEqual({ '421 4.3.2': 20 });
    expect(flood.find((r) => r.line.startsWith('421'))!.line).toMatch(/Too many connections, try again later/);

    // The authenticated sessions still submit.
    for (const c of pool) {
      expect((await c.cmd(`MAIL FROM:<app@${s.domain}>`))?.code).toBe(250);
      expect((await c.cmd('RCPT TO:<ann@example.net>'))?.code).toBe(250);
      expect((await c.data(`From: <app@${s.domain}>\r\nSubject: pool\r\n\r\nx\r\n`))?.code).toBe(250);
    }
    // A newcomer from another address takes the flood's oldest unauthenticated slot.
    const evicted = Promise.race(held.map((sock) => new Promise<string>((resolve) => sock.once('data', (d: string) => resolve(d)))));
    expect(await submit(port, s, t.apiKey, '127.0.0.4')).toMatch(/^250 /);
    expect(await evicted).toMatch(/^421 4\.3\.2 Too many connections/);
    for (const c of pool) await c.quit();
  });
});

/** A client that does not close its side when the server closes (no FIN back): its socket lingers on the server. */
async function halfOpen(port: number, localAddress: string): Promise<SmtpWire> {
  const socket = net.connect({ port, host: '127.0.0.1', localAddress, allowHalfOpen: true });
  sockets.push(socket);
  return SmtpWire.over(socket);
}

describe('SMTP connection limits at the end of a session', () => {
  it("frees an authenticated session's place from its address at its QUIT, before its socket closes", async () => {
    const { t, s, port } = await daemonWith({ 'smtp.maxConnectionsPerAddress': 1 });
    const first = await halfOpen(port, LEGIT);
    expect((await first.login(s.channelId, t.apiKey))?.code).toBe(235);
    expect((await first.cmd('QUIT'))?.code).toBe(221);
    // The first socket is still open on the server (up to the library's 5 s half-close deadline).
    expect(first.isClosed).toBe(false);
    expect(await submit(port, s, t.apiKey, LEGIT)).toMatch(/^250 2\.0\.0 /);
  });

  it('keeps the place of a session that QUIT without authenticating until its socket is gone', async () => {
    const { port } = await daemonWith({ 'smtp.maxConnectionsPerAddress': 1 });
    const first = await halfOpen(port, ATTACKER);
    expect((await first.reply())?.code).toBe(220);
    expect((await first.cmd('QUIT'))?.code).toBe(221);
    expect((await firstLine(port, ATTACKER)).line).toMatch(/^421 4\.7\.0 Too many connections from your address/);
  });
});

describe('SMTP AUTH throttling', () => {
  it('pauses AUTH from an address failing across user names, and nobody else', async () => {
    const { t, s, port } = await daemonWith({ 'smtp.authFailuresPerAddress': 5 });
    const guesser = await SmtpWire.connect(port, { localAddress: '127.0.0.3' });
    await guesser.reply();
    await guesser.cmd('EHLO guesser.example');
    for (let i = 0; i < 5; i++) {
      const r = await guesser.cmd(`AUTH PLAIN ${Buffer.from(`\0user-${i}\0pr_guess${i}`).toString('base64')}`);
      expect(r?.text).toMatch(/^535 5\.7\.8 /);
    }
    // Even the right credentials are refused from this address for the rest of the minute.
    const paused = await guesser.cmd(`AUTH PLAIN ${Buffer.from(`\0${s.channelId}\0${t.apiKey}`).toString('base64')}`);
    expect(paused?.text).toMatch(/^421 4\.7\.0 Too many failed authentication attempts from your address/);
    guesser.close();
    expect(await submit(port, s, t.apiKey, LEGIT)).toMatch(/^250 /);
  });
});
