/**
 * `postrider serve` as a child process against peers that reset the connection (RST) at every
 * point of a session, on loopback: MX hosts (at connect, after the greeting, in the STARTTLS
 * handshake, in the message body), webhook endpoints (at connect, on the request, in the TLS
 * handshake) and inbound SMTP clients (at connect, in the STARTTLS handshake, in the message
 * body). The daemon must stay up through all of it and record each failure as what it is:
 * a deferred delivery with the reason, a failed webhook attempt that is retried.
 */
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChildDaemon } from '../support/child-daemon.js';
import { failedWebhookAttempts, sendOne } from '../support/child-sends.js';
import { freePort } from '../support/cli.js';
import { startDnsServer, type TestDns } from '../support/dns-server.js';
import { startResetPeer, smtpResetScript, type ResetPeer } from '../support/reset-peer.js';
import { setupSender, type Sender } from '../support/sending.js';
import { SmtpWire } from '../support/smtp-wire.js';

type MxReset = 'connect' | 'ehlo' | 'starttls-handshake' | 'data-body';
const MX_RESETS: ReadonlyArray<readonly [MxReset, string]> = [
  ['connect', '127.0.40.2'],
  ['ehlo', '127.0.40.3'],
  ['starttls-handshake', '127.0.40.4'],
  ['data-body', '127.0.40.5'],
];

let dns: TestDns;
let d: ChildDaemon;
let s: Sender;
let inboundPort: number;
const mxPeers = new Map<MxReset, ResetPeer>();
let hookAtConnect: ResetPeer;
let hookOnRequest: ResetPeer;

const failedAttempts = (webhookId: string) => failedWebhookAttempts(d, webhookId);
const send = (to: string) => sendOne(d, s, to);

beforeAll(async () => {
  dns = await startDnsServer();
  const first = await startResetPeer({ host: MX_RESETS[0][1], greeting: 'reset' });
  mxPeers.set('connect', first);
  for (const [at, host] of MX_RESETS.slice(1)) {
    mxPeers.set(at, await startResetPeer({ host, port: first.port, ...smtpResetScript(at as Exclude<MxReset, 'connect'>) }));
  }
  for (const [at, host] of MX_RESETS) {
    dns.set(`${at}.example.net`, 'MX', [`10 mx.${at}.example.net`]);
    dns.set(`mx.${at}.example.net`, 'A', [host]);
  }
  hookAtConnect = await startResetPeer({ host: '127.0.40.10', greeting: 'reset' });
  hookOnRequest = await startResetPeer({ host: '127.0.40.11', resetOnFirstByte: true });
  inboundPort = await freePort();
  d = new ChildDaemon({
    env: {
      POSTRIDER_LOG_LEVEL: 'info',
      POSTRIDER_DNS_SERVERS: dns.address,
      POSTRIDER_WEBHOOKS_ALLOW_HTTP: 'true',
      POSTRIDER_WEBHOOKS_ALLOW_PRIVATE: 'true',
      POSTRIDER_WEBHOOKS_RETRY_BASE_MS: '200ms',
      POSTRIDER_DELIVERY_ENABLED: 'true',
      POSTRIDER_DELIVERY_PORT: String(first.port),
      POSTRIDER_DELIVERY_ALLOW_PRIVATE: 'true',
      POSTRIDER_DELIVERY_RETRY_SCHEDULE: '1s*',
      POSTRIDER_INBOUND_ENABLED: 'true',
      POSTRIDER_INBOUND_PORT: String(inboundPort),
    },
  });
  await d.start();
  s = await setupSender(d, dns);
}, 60_000);

afterAll(async () => {
  await d?.close();
  await Promise.all([dns?.close(), ...[...mxPeers.values(), hookAtConnect, hookOnRequest].map((p) => p?.close())]);
});

describe('MX hosts that reset the connection', () => {
  it.each(MX_RESETS.map(([at]) => at))('defers the message when the MX resets at %s, and tries again', async (at) => {
    const messageId = await send(`ann@${at}.example.net`);
    const attempts = await d.whileAlive(async () => {
      const res = await d.api('GET', `/activity/messages/${messageId}`);
      return res.body.attempts?.length >= 2 ? res.body.attempts : null;
    }, { what: `two attempts to ${at}` });
    for (const a of attempts.slice(0, 2)) expect(a).toMatchObject({ outcome: 'deferred', mx: `mx.${at}.example.net` });
    expect(attempts[0].response).toMatch(/^ECONNRESET: (connect|read|write) ECONNRESET/);
    expect(mxPeers.get(at)!.resets).toBeGreaterThanOrEqual(2);
  });
});

describe('webhook endpoints that reset the connection', () => {
  async function failedTwice(url: string): Promise<Array<{ attempt: number; error: string }>> {
    const res = await d.api('POST', '/webhooks', { body: { url, events: ['accepted'], channelId: s.channelId } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const id = res.body.id as string;
    await send(`bob-${randomBytes(4).toString('hex')}@example.org`); // a new one each time: it bounces (no MX) and is suppressed
    return d.whileAlive(() => {
      const f = failedAttempts(id);
      return f.length >= 2 ? f : null;
    }, { what: `two failed attempts of ${url}` });
  }

  it('retries a webhook whose endpoint resets at connect', async () => {
    const failures = await failedTwice(`http://127.0.40.10:${hookAtConnect.port}/hook`);
    expect(failures[0].error).toMatch(/^request failed: .*ECONNRESET$/);
  });

  it('retries a webhook whose endpoint resets on the request', async () => {
    const failures = await failedTwice(`http://127.0.40.11:${hookOnRequest.port}/hook`);
    expect(failures[0].error).toMatch(/^request failed: .*ECONNRESET$/);
  });

  it('retries an https webhook whose endpoint resets in the TLS handshake', async () => {
    const failures = await failedTwice(`https://127.0.40.11:${hookOnRequest.port}/secure`);
    expect(failures[0].error).toMatch(/^request failed: .*ECONNRESET$/);
  });
});

describe('inbound clients that reset the connection', () => {
  /** RST from our side: the listener sees ECONNRESET. */
  const resetWire = (w: SmtpWire): void => void w.socket.resetAndDestroy();

  it('keeps serving after clients reset at connect, in the STARTTLS handshake and in the message body', async () => {
    const rcpt = `bounces@${s.dnsRecords.returnPath[0].host}`;
    // At connect, before the greeting was read.
    const early = net.connect({ host: '127.0.0.1', port: inboundPort });
    early.on('error', () => undefined);
    await new Promise((r) => early.once('connect', r));
    early.resetAndDestroy();

    // In the TLS handshake: the start of a ClientHello record (RFC 8446 5.1), then RST.
    const hs = await SmtpWire.connect(inboundPort);
    await hs.reply();
    await hs.cmd('EHLO client.test');
    expect((await hs.cmd('STARTTLS'))?.code).toBe(220);
    hs.write(Buffer.concat([Buffer.from([0x16, 0x03, 0x01, 0x00, 0xc8, 0x01, 0x00, 0x00, 0xc4, 0x03, 0x03]), randomBytes(32)]));
    resetWire(hs);

    // In the message body.
    const body = await SmtpWire.connect(inboundPort);
    await body.reply();
    await body.cmd('EHLO client.test');
    expect((await body.cmd('MAIL FROM:<>'))?.code).toBe(250);
    expect((await body.cmd(`RCPT TO:<${rcpt}>`))?.code).toBe(250);
    expect((await body.cmd('DATA'))?.code).toBe(354);
    body.write('Subject: half a report\r\n\r\nand then');
    resetWire(body);

    // The listener and the daemon are still there and answer the next client normally.
    const next = await SmtpWire.connect(inboundPort);
    expect((await next.reply())?.code).toBe(220);
    expect((await next.cmd('EHLO client.test'))?.code).toBe(250);
    expect((await next.cmd(`RCPT TO:<${rcpt}>`))?.code).toBe(503);
    await next.quit();
    expect(d.alive).toBe(true);
    expect((await d.api('GET', '/ready')).status).toBe(200);
  });
});
