/**
 * The trace and date fields SMTP submission adds (issue 21, defects 4 and 5): a Received field on
 * top (RFC 5321 4.4) naming the client's EHLO name and address literal, our host name, the RFC
 * 3848 protocol (ESMTPA on loopback without TLS, ESMTPSA with STARTTLS) and the message id; a
 * Date with a numeric zone (RFC 5322 3.3); both under the DKIM signature. smtp.receivedClientInfo
 * false leaves the client out.
 */
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import { dkimpyAvailable, dkimpyVerify } from '../support/dkimpy.js';
import { startDnsServer, type TestDns } from '../support/dns-server.js';
import { setupSender, type Sender } from '../support/sending.js';
import { signedBody } from '../support/signing.js';
import { SmtpWire } from '../support/smtp-wire.js';

const DATE = /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d\d (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d\d:\d\d:\d\d \+0000$/;

let dns: TestDns;

beforeAll(async () => {
  dns = await startDnsServer();
});

afterAll(async () => {
  await dns?.close();
});

/** Submits over a bare socket (EHLO client.example, no TLS: allowed from loopback); the stored, signed message. */
async function submitPlain(t: TestDaemon, s: Sender): Promise<{ id: string; body: string }> {
  const c = await SmtpWire.connect(t.daemon.smtp!.port);
  try {
    expect((await c.login(s.channelId, t.apiKey))?.code).toBe(235);
    expect((await c.cmd(`MAIL FROM:<app@${s.domain}>`))?.code).toBe(250);
    expect((await c.cmd('RCPT TO:<ann@example.net>'))?.code).toBe(250);
    const r = await c.data(`From: <app@${s.domain}>\r\nTo: <ann@example.net>\r\nSubject: trace\r\n\r\nbody\r\n`);
    const id = /queued as ([0-9a-f-]{36})/.exec(r?.text ?? '')?.[1];
    expect(id, r?.text).toBeDefined();
    return { id: id!, body: (await signedBody(t.daemon.store, id!)).toString('latin1') };
  } finally {
    await c.quit();
  }
}

/** The header fields of a message, unfolded, in order. */
function fields(body: string): string[] {
  return body.slice(0, body.indexOf('\r\n\r\n')).replace(/\r\n[ \t]+/g, ' ').split('\r\n');
}

describe('Received and Date on SMTP submission', () => {
  let t: TestDaemon;
  let s: Sender;

  beforeAll(async () => {
    t = await startDaemon({ 'dns.servers': [dns.address], 'smtp.enabled': true, 'smtp.port': 0 });
    s = await setupSender(t, dns);
  });

  afterAll(async () => {
    await t?.stop();
  });

  it('prepends a Received field naming the client, us, ESMTPA and the message id, and adds a Date with +0000', async () => {
    const { id, body } = await submitPlain(t, s);
    const f = fields(body);
    expect(f[0]).toMatch(/^DKIM-Signature:/);
    // Folded as written: "from ..." / "by ..." / date, each continuation on its own line.
    expect(body).toContain(`\r\nReceived: from client.example ([127.0.0.1])\r\n\tby ${t.config.hostname} with ESMTPA id ${id};\r\n\t`);
    const received = f[1].split('; ');
    expect(received[0]).toBe(`Received: from client.example ([127.0.0.1]) by ${t.config.hostname} with ESMTPA id ${id}`);
    expect(received[1]).toMatch(DATE);
    const date = f.find((l) => l.startsWith('Date: '))!.slice(6);
    expect(date).toMatch(DATE);
    expect(f.filter((l) => /^received:/i.test(l))).toHaveLength(1);
  });

  it('names the protocol ESMTPSA over STARTTLS (RFC 3848)', async () => {
    const transport = nodemailer.createTransport({
      host: '127.0.0.1',
      port: t.daemon.smtp!.port,
      secure: false,
      requireTLS: true,
      name: 'tls-client.example',
      tls: { rejectUnauthorized: false },
      auth: { user: s.channelId, pass: t.apiKey },
    });
    const info = await transport.sendMail({ from: `app@${s.domain}`, to: 'ann@example.net', subject: 'tls', text: 'hi' });
    const id = /queued as ([0-9a-f-]{36})/.exec(info.response)![1];
    const f = fields((await signedBody(t.daemon.store, id)).toString('latin1'));
    expect(f[1]).toMatch(new RegExp(`^Received: from tls-client\\.example \\(\\[127\\.0\\.0\\.1\\]\\) by ${t.config.hostname.replace(/\./g, '\\.')} with ESMTPSA id ${id}; `));
  });

  it.skipIf(!dkimpyAvailable())('signs the message with the Received field in it (dkimpy verifies)', async () => {
    const { body } = await submitPlain(t, s);
    expect(await dkimpyVerify(Buffer.from(body, 'latin1'), s.dnsRecords.domainKeyActive.value)).toBe('pass');
  });
});

describe('smtp.receivedClientInfo false', () => {
  let t: TestDaemon;
  let s: Sender;

  beforeAll(async () => {
    t = await startDaemon({ 'dns.servers': [dns.address], 'smtp.enabled': true, 'smtp.port': 0, 'smtp.receivedClientInfo': false });
    s = await setupSender(t, dns);
  });

  afterAll(async () => {
    await t?.stop();
  });

  it('leaves the client\'s name and address out of the Received field', async () => {
    const { id, body } = await submitPlain(t, s);
    const f = fields(body);
    expect(f[1]).toMatch(new RegExp(`^Received: from unknown by ${t.config.hostname.replace(/\./g, '\\.')} with ESMTPA id ${id}; `));
    const head = body.slice(0, body.indexOf('\r\n\r\n'));
    expect(head).not.toContain('127.0.0.1');
    expect(head).not.toContain('client.example');
  });
});
