/**
 * The SMTP listener's part of a graceful shutdown (RFC 5321 3.8), in-process with the real
 * listener: stop() stops accepting at once, closes idle sessions with 421 4.3.2, answers the
 * next command of a session with 421 4.3.2, lets a message being received finish and get its
 * 250 (committed), and ends within shutdown.graceMs whatever the clients do.
 */
import net from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import { startDnsServer, type TestDns } from '../support/dns-server.js';
import { setupSender, type Sender } from '../support/sending.js';
import { SmtpWire } from '../support/smtp-wire.js';

let dns: TestDns;
let t: TestDaemon | undefined;
let s: Sender;
const clients: SmtpWire[] = [];

beforeAll(async () => {
  dns = await startDnsServer();
});

afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await t?.stop();
  t = undefined;
});

afterAll(async () => {
  await dns?.close();
});

async function daemon(graceMs = 5000): Promise<TestDaemon> {
  t = await startDaemon({ 'dns.servers': [dns.address], 'smtp.enabled': true, 'smtp.port': 0, 'shutdown.graceMs': graceMs });
  s = await setupSender(t, dns, { deliveryType: 'sandbox' });
  return t;
}

/** An authenticated session with MAIL FROM and RCPT TO done. */
async function inTransaction(d: TestDaemon): Promise<SmtpWire> {
  const c = await SmtpWire.connect(d.daemon.smtp!.port);
  clients.push(c);
  expect((await c.login(s.channelId, d.apiKey))?.code).toBe(235);
  expect((await c.cmd(`MAIL FROM:<app@${s.domain}>`))?.code).toBe(250);
  expect((await c.cmd('RCPT TO:<ann@example.net>'))?.code).toBe(250);
  return c;
}

/** Resolves with the time stop() took, or fails when it takes longer than `limitMs`. */
async function timedStop(d: TestDaemon, limitMs: number): Promise<number> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    d.daemon.smtp!.stop(),
    new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`smtp.stop() took more than ${limitMs} ms`)), limitMs))),
  ]);
  clearTimeout(timer);
  return performance.now() - started;
}

function refusedConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = net.connect({ port, host: '127.0.0.1' });
    sock.once('connect', () => {
      sock.destroy();
      resolve(false);
    });
    sock.once('error', () => resolve(true));
  });
}

describe('SMTP listener shutdown', () => {
  it('closes an idle authenticated session with 421 4.3.2 at once instead of waiting for it', async () => {
    const d = await daemon(5000);
    const idle = await SmtpWire.connect(d.daemon.smtp!.port);
    clients.push(idle);
    expect((await idle.login(s.channelId, d.apiKey))?.code).toBe(235);
    const ms = await timedStop(d, 4000);
    expect(ms).toBeLessThan(1000);
    expect((await idle.reply())?.text).toMatch(/^421 4\.3\.2 Service shutting down/);
    expect(await refusedConnect(d.daemon.smtp!.port)).toBe(true);
  });

  it('answers the next command of a session in the middle of a transaction with 421 4.3.2 and closes it', async () => {
    const d = await daemon(5000);
    const c = await inTransaction(d);
    const stopping = d.daemon.smtp!.stop();
    const r = await c.cmd('RCPT TO:<bob@example.net>');
    expect(r?.text).toMatch(/^421 4\.3\.2 /);
    expect(await c.reply(2000)).toBeNull(); // closed
    await stopping;
  });

  it('lets a message being received when stop begins finish: 250, committed, then 421 4.3.2', async () => {
    const d = await daemon(5000);
    const c = await inTransaction(d);
    expect((await c.cmd('DATA'))?.code).toBe(354);
    c.write(`From: <app@${s.domain}>\r\nTo: <ann@example.net>\r\nSubject: in flight\r\n\r\nfirst half\r\n`);
    const stopping = d.daemon.smtp!.stop();
    // A new client can no longer connect while this one finishes.
    expect(await refusedConnect(d.daemon.smtp!.port)).toBe(true);
    c.write('second half\r\n.\r\n');
    const done = await c.reply();
    expect(done?.text).toMatch(/^250 2\.0\.0 Ok: queued as /);
    const id = /queued as ([0-9a-f-]{36})/.exec(done!.text)![1];
    expect((await d.daemon.store.messages.get(id))).toMatchObject({ subject: 'in flight', mailSource: 'smtp' });
    expect((await c.reply())?.text).toMatch(/^421 4\.3\.2 /);
    await stopping;
  });

  it('ends within shutdown.graceMs when a client never finishes its message', async () => {
    const d = await daemon(1000);
    const c = await inTransaction(d);
    expect((await c.cmd('DATA'))?.code).toBe(354);
    c.write(`From: <app@${s.domain}>\r\nSubject: never ends\r\n\r\n`);
    const ms = await timedStop(d, 3000);
    expect(ms).toBeGreaterThanOrEqual(900);
    expect(ms).toBeLessThan(2000);
    // Cut: a last 421 4.3.2 if it still got through, then the connection is gone.
    const last = await c.reply(2000);
    if (last) expect(last.text).toMatch(/^421 4\.3\.2 /);
    expect(await c.reply(2000)).toBeNull();
  });
});
