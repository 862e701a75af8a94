/**
 * Slow-loris and connection floods, bounded and on loopback: while hundreds of connections
 * from another loopback address hold the HTTP and SMTP listeners (idle, trickling headers a
 * byte at a time, trickling a request body or DATA), the daemon keeps answering other clients
 * promptly. The flood stays under the listeners' own connection limits (the SMTP cap per
 * address is raised for it): the point is that held connections cost the others nothing, not how
 * many a single address may open (test/integration/security-smtp-exhaustion.test.ts covers that).
 */
import { execFileSync } from 'node:child_process';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChildDaemon } from '../support/child-daemon.js';
import { startDnsServer, type TestDns } from '../support/dns-server.js';
import { setupSender, type Sender } from '../support/sending.js';
import { SmtpWire } from '../support/smtp-wire.js';
import { waitFor } from '../support/wait.js';

const ATTACKER = '127.0.66.1';

let dns: TestDns;
let d: ChildDaemon;
let s: Sender;
const held: net.Socket[] = [];
const timers: NodeJS.Timeout[] = [];
/** Sockets the server has written to (for SMTP ones, the greeting). */
const answered = new Set<net.Socket>();
/** The held SMTP sockets, each owed a greeting. */
const smtpHeld: net.Socket[] = [];
/** Per trickling socket, how many of its trickled bytes have left for the server. */
const trickled = new Map<net.Socket, number>();

/** Connections per kind, scaled down when the file descriptor limit is low. */
function perKind(): number {
  let limit = 1024;
  try {
    limit = Number(execFileSync('bash', ['-c', 'ulimit -n'], { encoding: 'utf8' }).trim()) || 1024;
  } catch {
    /* keep the conservative default */
  }
  return Math.max(20, Math.min(150, Math.floor((limit - 200) / 6)));
}

function hold(port: number, onConnect: (s: net.Socket) => void): Promise<void> {
  return new Promise((resolve) => {
    const sock = net.connect({ port, host: '127.0.0.1', localAddress: ATTACKER });
    sock.on('error', () => undefined);
    sock.on('data', () => answered.add(sock));
    sock.once('connect', () => {
      onConnect(sock);
      resolve();
    });
    sock.once('error', () => resolve());
    held.push(sock);
    if (port === d.smtpPort) smtpHeld.push(sock);
  });
}

/** Writes one byte every intervalMs for as long as the test runs. */
function trickle(sock: net.Socket, intervalMs: number, byte = 'a'): void {
  trickled.set(sock, 0);
  const sent = (err?: Error | null) => {
    if (!err) trickled.set(sock, trickled.get(sock)! + 1);
  };
  timers.push(setInterval(() => sock.writable && sock.write(byte, sent), intervalMs));
}

/** Held sockets the server has not closed. */
const stillOpen = () => held.filter((sock) => !sock.destroyed).length;

beforeAll(async () => {
  dns = await startDnsServer();
  d = new ChildDaemon({
    env: { POSTRIDER_SMTP_ENABLED: 'true', POSTRIDER_DNS_SERVERS: dns.address, POSTRIDER_API_RATE_LIMIT: '100000', POSTRIDER_SMTP_MAX_CONNECTIONS_PER_ADDRESS: '1000' },
  });
  await d.start();
  s = await setupSender(d, dns, { deliveryType: 'sandbox' });
}, 60_000);

afterAll(async () => {
  for (const t of timers) clearInterval(t);
  for (const sock of held) sock.destroy();
  await d?.close();
  await dns?.close();
});

async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const start = performance.now();
  const value = await fn();
  return { value, ms: performance.now() - start };
}

async function legitSmtp(): Promise<string> {
  const c = await SmtpWire.connect(d.smtpPort);
  try {
    expect((await c.login(s.channelId, d.apiKey))?.code).toBe(235);
    expect((await c.cmd(`MAIL FROM:<app@${s.domain}>`))?.code).toBe(250);
    expect((await c.cmd('RCPT TO:<ann@example.net>'))?.code).toBe(250);
    const r = await c.data(`From: <app@${s.domain}>\r\nTo: <ann@example.net>\r\nSubject: during the flood\r\n\r\nstill here\r\n`);
    return r?.text ?? '(closed)';
  } finally {
    await c.quit();
  }
}

describe('under a bounded flood', () => {
  it('keeps serving HTTP and SMTP clients while the listeners are held by slow and idle connections', async () => {
    const n = perKind();
    const http = d.httpPort;
    const smtp = d.smtpPort;
    const opened: Promise<void>[] = [];
    for (let i = 0; i < n; i++) {
      // HTTP: idle sockets; headers a byte at a time; a declared 10 MB body a byte at a time.
      opened.push(hold(http, () => undefined));
      opened.push(hold(http, (sock) => {
        sock.write(`GET /channels HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${d.apiKey}\r\nX-Slow: `);
        trickle(sock, 500);
      }));
      opened.push(hold(http, (sock) => {
        sock.write(`POST /channels HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${d.apiKey}\r\nContent-Type: application/json\r\nContent-Length: 10000000\r\n\r\n{"name":"`);
        trickle(sock, 500);
      }));
      // SMTP: idle after the greeting; a command a byte at a time.
      opened.push(hold(smtp, () => undefined));
      opened.push(hold(smtp, (sock) => trickle(sock, 500, 'E')));
    }
    // SMTP: authenticated sessions that trickle their DATA.
    for (let i = 0; i < Math.ceil(n / 3); i++) {
      opened.push(
        (async () => {
          const c = await SmtpWire.connect(smtp, { localAddress: ATTACKER });
          held.push(c.socket);
          await c.login(s.channelId, d.apiKey);
          await c.cmd(`MAIL FROM:<app@${s.domain}>`);
          await c.cmd('RCPT TO:<ann@example.net>');
          await c.cmd('DATA');
          c.write(`From: <app@${s.domain}>\r\nSubject: slow\r\n\r\n`);
          trickle(c.socket, 500, 'x');
        })().catch(() => undefined),
      );
    }
    await Promise.all(opened);
    // The flood is in place once every SMTP connection has its greeting and every trickle has
    // sent the server a byte: a listener that drops them on either has had its chance.
    await waitFor(() => smtpHeld.every((sock) => sock.destroyed || answered.has(sock)) && [...trickled].every(([sock, bytes]) => sock.destroyed || bytes > 0), {
      what: 'every SMTP greeting and a first trickled byte on every slow connection',
      timeout: 20_000,
    });
    const open = stillOpen();
    expect(open).toBeGreaterThan(n * 4);

    const latencies: number[] = [];
    for (let round = 0; round < 10; round++) {
      const health = await timed(() => fetch(`${d.url}/health`).then((r) => r.status));
      const list = await timed(() => d.api('GET', '/channels'));
      const send = await timed(() =>
        d.api('POST', '/send/transactional', {
          headers: { 'x-service-channel-id': s.channelId },
          body: { from: { email: `app@${s.domain}` }, to: [{ email: 'ann@example.net' }], subject: 'flood', text: 'x' },
        }),
      );
      expect(health.value).toBe(200);
      expect(list.value.status).toBe(200);
      expect(send.value.status, JSON.stringify(send.value.body)).toBe(200);
      latencies.push(health.ms, list.ms, send.ms);
    }
    const smtpSend = await timed(legitSmtp);
    expect(smtpSend.value).toMatch(/^250 /);
    console.log(`[flood] ${open} held connections; HTTP answers in at most ${Math.round(Math.max(...latencies))} ms, an SMTP submission in ${Math.round(smtpSend.ms)} ms`);
    expect(Math.max(...latencies)).toBeLessThan(2000);
    expect(smtpSend.ms).toBeLessThan(5000);
    expect(d.alive).toBe(true);
    // Counted again after the rounds above (server work on both listeners that comes after the
    // trickled bytes): the flood was still held while the other clients were measured.
    expect(stillOpen()).toBeGreaterThan(n * 4);
  }, 60_000);
});
