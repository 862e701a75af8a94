/**
 * A message far over smtp.maxMessageSize is read to its end and dropped, not kept: the client
 * gets 552 5.3.4 after its final dot (RFC 5321 4.1.1.4, RFC 1870) and the daemon's memory does
 * not grow with what it sent. In-process, so the sampled memory is the daemon's (and the
 * client's one reused chunk).
 */
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemonWithDns, stopDaemonWithDns, type TestDaemon } from '../support/daemon.js';
import type { TestDns } from '../support/dns-server.js';
import { setupSender, type Sender } from '../support/sending.js';
import { SmtpWire } from '../support/smtp-wire.js';

const MiB = 1024 * 1024;
const LIMIT = 1 * MiB;
const SENT = 256 * MiB;

let dns: TestDns;
let t: TestDaemon;
let s: Sender;

beforeAll(async () => {
  ({ t, dns } = await startDaemonWithDns({ 'smtp.enabled': true, 'smtp.port': 0, 'smtp.maxMessageSize': LIMIT }));
  s = await setupSender(t, dns, { deliveryType: 'sandbox' });
});

afterAll(() => stopDaemonWithDns({ t, dns }));

/** 1 MiB of 128-octet lines (8192 whole lines), written again and again. */
function chunk(): Buffer {
  return Buffer.from(('x'.repeat(126) + '\r\n').repeat(MiB / 128), 'latin1');
}

describe('an oversized SMTP message', () => {
  it(`is drained without being kept: ${SENT / MiB} MiB against a ${LIMIT / MiB} MiB limit gets 552 5.3.4, memory stays flat`, async () => {
    const c = await SmtpWire.connect(t.daemon.smtp!.port);
    expect((await c.login(s.channelId, t.apiKey))?.code).toBe(235);
    expect((await c.cmd(`MAIL FROM:<app@${s.domain}>`))?.code).toBe(250);
    expect((await c.cmd('RCPT TO:<ann@example.net>'))?.code).toBe(250);
    expect((await c.cmd('DATA'))?.code).toBe(354);

    const base = process.memoryUsage();
    let peak = { rss: base.rss, arrayBuffers: base.arrayBuffers };
    const sampler = setInterval(() => {
      const m = process.memoryUsage();
      peak = { rss: Math.max(peak.rss, m.rss), arrayBuffers: Math.max(peak.arrayBuffers, m.arrayBuffers) };
    }, 20);
    const data = chunk();
    c.write(`From: <app@${s.domain}>\r\nTo: <ann@example.net>\r\nSubject: huge\r\n\r\n`);
    for (let sent = 0; sent < SENT; sent += data.length) {
      if (!c.socket.write(data)) await once(c.socket, 'drain');
    }
    c.write('.\r\n');
    const reply = await c.reply(120_000);
    clearInterval(sampler);

    const grew = { rss: (peak.rss - base.rss) / MiB, arrayBuffers: (peak.arrayBuffers - base.arrayBuffers) / MiB };
    console.log(`[oversized] sent ${SENT / MiB} MiB, limit ${LIMIT / MiB} MiB: peak growth rss ${grew.rss.toFixed(1)} MiB, buffers ${grew.arrayBuffers.toFixed(1)} MiB`);
    expect(reply?.text).toMatch(/^552 5\.3\.4 Message exceeds the maximum size/);
    expect(grew.arrayBuffers).toBeLessThan(64);
    expect(grew.rss).toBeLessThan(128);

    // The session goes on: the next message within the limit is taken.
    expect((await c.cmd(`MAIL FROM:<app@${s.domain}>`))?.code).toBe(250);
    expect((await c.cmd('RCPT TO:<ann@example.net>'))?.code).toBe(250);
    expect((await c.data(`From: <app@${s.domain}>\r\nSubject: small\r\n\r\nfits\r\n`))?.text).toMatch(/^250 /);
    await c.quit();
  }, 120_000);
});
