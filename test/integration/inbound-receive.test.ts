/**
 * The inbound listener receiving routed mail over real SMTP on loopback (issue 33): a recipient
 * is accepted only where an enabled route matches it (exact address, plus-addressing with its
 * mailbox hash, the catch-all) and refused with 550 5.1.1 otherwise; the message is committed,
 * raw bytes and envelope, one record per route, before the 250; a 25 MB attachment fits the
 * default size limit (Python's smtplib as the client); swaks over STARTTLS; and the abuse defences of the submission
 * listener apply: the size limit, the per-address connection cap and the session deadline.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InboundMessage } from '../../src/domain/inbound-message.js';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import { startDnsServer, type TestDns } from '../support/dns-server.js';
import { newChannel, newVerifiedDomain, uniqueName } from '../support/domains.js';
import { SmtpWire } from '../support/smtp-wire.js';

const run = promisify(execFile);

let t: TestDaemon;
/** One DNS server for both daemons: it serves the domains' records for their verification. */
let dns: TestDns;
/** A second daemon with small limits, for the abuse defences. */
let small: TestDaemon;
let channelId: string;
let domain: string;

beforeAll(async () => {
  dns = await startDnsServer();
  const loopbackUrls = { 'webhooks.allowHttp': true, 'webhooks.allowPrivate': true, 'dns.servers': [dns.address] };
  [t, small] = await Promise.all([
    startDaemon({ 'inbound.enabled': true, 'inbound.port': 0, ...loopbackUrls }),
    startDaemon({ 'inbound.enabled': true, 'inbound.port': 0, 'inbound.maxMessageSize': 64 * 1024, 'inbound.maxConnectionsPerAddress': 2, 'inbound.sessionTimeoutMs': 1000, ...loopbackUrls }),
  ]);
  channelId = await newChannel(t);
  domain = (await newVerifiedDomain(t, dns, { name: uniqueName('in'), channelIds: [channelId] })).name;
}, 60_000);

afterAll(async () => {
  await Promise.all([t?.stop(), small?.stop()]);
  await dns?.close();
});

async function route(address: string, o: { enabled?: boolean } = {}): Promise<{ id: string }> {
  const res = await t.api('POST', '/inbound/routes', { body: { channelId, address, url: 'http://127.0.0.1:9/inbound', ...o } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

/** Sends over SMTP with nodemailer; resolves with the server's answer (accepted, rejected, reply). */
async function send(o: { from?: string; to: string[]; raw: string | Buffer }) {
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port: t.daemon.inbound!.port, secure: false, ignoreTLS: true });
  try {
    const info = await transport.sendMail({ envelope: { from: o.from ?? 'alice@example.org', to: o.to }, raw: o.raw });
    return { response: info.response, accepted: info.accepted as string[], rejected: info.rejected as string[] };
  } finally {
    transport.close();
  }
}

async function receivedFor(routeId: string): Promise<InboundMessage[]> {
  return (await t.daemon.store.inboundMessages.list({ accountId: t.accountId, routeId, limit: 100 })).results;
}

const message = (subject: string, body = 'Hello there') =>
  `From: Alice <Alice@Example.org>\r\nTo: someone@${domain}\r\nSubject: ${subject}\r\nMessage-ID: <${subject.replace(/\W/g, '')}@example.org>\r\n\r\n${body}\r\n`;

describe('receiving routed mail', () => {
  it('commits a message for a routed address, raw bytes and envelope, before its 250', async () => {
    const r = await route(`support@${domain}`);
    const raw = message('Order 4711', 'Grüße aus Köln'.normalize());
    const sent = await send({ to: [`support@${domain}`], raw });
    expect(sent.response).toMatch(/^250 2\.0\.0 /);
    // The 250 came after the commit: the record is there now, without waiting.
    const [m] = await receivedFor(r.id);
    expect(m).toMatchObject({
      routeId: r.id,
      accountId: t.accountId,
      channelId,
      envelope: { mailFrom: 'alice@example.org', rcptTo: [`support@${domain}`] },
      clientAddress: '127.0.0.1',
      mailboxHash: null,
      from: 'alice@example.org',
      subject: 'Order 4711',
      status: 'received',
    });
    expect(m.helo).toEqual(expect.any(String));
    expect((await t.daemon.store.inboundMessages.raw(m.id))!.toString('utf8')).toBe(raw);
  });

  it('matches plus-addressing with its mailbox hash, and the catch-all for every other local part', async () => {
    const base = await route(`help@${domain}`);
    const all = await route(`*@${domain}`);
    await send({ to: [`help+Ticket-77@${domain}`], raw: message('Re: ticket') });
    await send({ to: [`anyone@${domain}`], raw: message('To anyone') });
    expect((await receivedFor(base.id)).map((m) => [m.mailboxHash, m.subject])).toEqual([['Ticket-77', 'Re: ticket']]);
    expect((await receivedFor(all.id)).map((m) => [m.envelope.rcptTo, m.subject])).toEqual([[[`anyone@${domain}`], 'To anyone']]);
    await t.api('DELETE', `/inbound/routes/${all.id}`);
  });

  it('refuses with 550 5.1.1 every recipient no enabled route matches: no relay, and keeps the message for the others', async () => {
    const on = await route(`sales@${domain}`);
    await route(`off@${domain}`, { enabled: false });
    const refused = [`nobody@${domain}`, `off@${domain}`, 'someone@elsewhere.example', `sales@sub.${domain}`];
    for (const to of refused) await expect(send({ to: [to], raw: message('x') }), to).rejects.toMatchObject({ responseCode: 550, response: expect.stringContaining('5.1.1') });
    const mixed = await send({ to: [`sales@${domain}`, 'victim@elsewhere.example'], raw: message('Mixed') });
    expect([mixed.accepted, mixed.rejected]).toEqual([[`sales@${domain}`], ['victim@elsewhere.example']]);
    expect((await receivedFor(on.id)).map((m) => m.envelope.rcptTo)).toEqual([[`sales@${domain}`]]);
  });

  it('commits one record per route for a message to several routes, each with its own recipients', async () => {
    const a = await route(`billing@${domain}`);
    const b = await route(`returns@${domain}`);
    await send({ to: [`billing@${domain}`, `returns@${domain}`, `billing+q3@${domain}`], raw: message('Two routes') });
    const [ma] = await receivedFor(a.id);
    const [mb] = await receivedFor(b.id);
    expect([ma.envelope.rcptTo, ma.mailboxHash]).toEqual([[`billing@${domain}`, `billing+q3@${domain}`], 'q3']);
    expect(mb.envelope.rcptTo).toEqual([`returns@${domain}`]);
    expect(ma.id).not.toBe(mb.id);
  });

  it('takes a swaks message over STARTTLS with an attachment and a non-ASCII subject, and refuses swaks to an unrouted address', async () => {
    const swaks = await run('which', ['swaks']).then(() => true, () => false);
    if (!swaks) throw new Error('swaks is not installed (.ci/run installs it)');
    const r = await route(`swaks@${domain}`);
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'swaks-'));
    const file = path.join(dir, 'lieferschein.pdf');
    await fs.writeFile(file, Buffer.from('%PDF-1.4 Lieferschein'));
    const port = String(t.daemon.inbound!.port);
    const { stdout } = await run('swaks', [
      '--server', '127.0.0.1', '--port', port, '--tls', '--from', 'lager@example.org', '--to', `swaks@${domain}`,
      '--header', 'Subject: =?UTF-8?B?' + Buffer.from('Lieferung für Köln').toString('base64') + '?=', '--body', 'Siehe Anhang.',
      '--attach-type', 'application/pdf', '--attach-name', 'lieferschein.pdf', '--attach', `@${file}`,
    ]);
    // The exchange after STARTTLS is swaks' "~>" / "<~" lines: the message went over TLS.
    expect(stdout).toMatch(/^ ?~> DATA$/m);
    const [m] = await receivedFor(r.id);
    expect([m.subject, m.envelope.mailFrom]).toEqual(['Lieferung für Köln', 'lager@example.org']);
    expect((await t.daemon.store.inboundMessages.raw(m.id))!.toString('latin1')).toContain('lieferschein.pdf');
    // swaks exits 24 when the server refuses the recipient.
    const refused = await run('swaks', ['--server', '127.0.0.1', '--port', port, '--from', 'x@example.org', '--to', 'victim@elsewhere.example']).then(
      () => ({ code: 0, stdout: '' }),
      (e: { code: number; stdout: string }) => e,
    );
    expect(refused.code).toBe(24);
    expect(refused.stdout).toMatch(/<\*\* 550 5\.1\.1 /);
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('takes a 25 MB attachment with non-ASCII names from Python smtplib', async () => {
    const r = await route(`files@${domain}`);
    const script = [
      'import smtplib, sys, os',
      'from email.message import EmailMessage',
      'm = EmailMessage()',
      "m['From'] = 'Jörg <joerg@example.org>'",
      `m['To'] = 'files@${domain}'`,
      "m['Subject'] = 'Rechnung für März'",
      "m.set_content('Anbei die Datei.')",
      "m.add_attachment(os.urandom(25 * 1000 * 1000), maintype='application', subtype='octet-stream', filename='größe.bin')",
      `s = smtplib.SMTP('127.0.0.1', ${t.daemon.inbound!.port}, timeout=120)`,
      `print(s.sendmail('joerg@example.org', ['files@${domain}'], m.as_bytes()))`,
      's.quit()',
    ].join('\n');
    const { stdout } = await run('python3', ['-c', script], { maxBuffer: 1024 * 1024, timeout: 180_000 });
    expect(stdout.trim()).toBe('{}');
    const [m] = await receivedFor(r.id);
    expect([m.from, m.subject]).toEqual(['joerg@example.org', 'Rechnung für März']);
    expect(m.size).toBeGreaterThan(25 * 1000 * 1000 * (4 / 3));
  }, 180_000);
});

describe('abuse defences of the inbound listener', () => {
  it('refuses a message over inbound.maxMessageSize with 552 5.3.4 after reading it, and commits nothing', async () => {
    const ch = await newChannel(small);
    const d = (await newVerifiedDomain(small, dns, { name: uniqueName('in'), channelIds: [ch] })).name;
    const res = await small.api('POST', '/inbound/routes', { body: { channelId: ch, address: `big@${d}`, url: 'http://127.0.0.1:9/inbound' } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const c = await SmtpWire.connect(small.daemon.inbound!.port);
    try {
      await c.reply();
      expect((await c.cmd('EHLO mx.example.org'))!.text).toMatch(new RegExp(`^250[ -]SIZE ${64 * 1024}$`, 'm'));
      await c.cmd('MAIL FROM:<>');
      expect((await c.cmd(`RCPT TO:<big@${d}>`))!.code).toBe(250);
      const r = await c.data(`Subject: big\r\n\r\n${('x'.repeat(76) + '\r\n').repeat(1000)}`);
      expect(r!.text).toMatch(/^552 5\.3\.4 /);
    } finally {
      await c.quit();
    }
    expect((await small.daemon.store.inboundMessages.list({ accountId: small.accountId, limit: 10 })).results).toEqual([]);
  });

  it('refuses a third connection from one address with 421 4.7.0 in place of the greeting', async () => {
    const held = [await SmtpWire.connect(small.daemon.inbound!.port), await SmtpWire.connect(small.daemon.inbound!.port)];
    try {
      for (const c of held) expect((await c.reply())!.code).toBe(220);
      const third = await SmtpWire.connect(small.daemon.inbound!.port);
      expect((await third.reply())!.text).toMatch(/^421 4\.7\.0 /);
      await third.quit();
    } finally {
      for (const c of held) await c.quit();
    }
  });

  it('ends a session at its deadline however active it is, with 421 4.7.0', async () => {
    const c = await SmtpWire.connect(small.daemon.inbound!.port);
    await c.reply();
    // Busy all along: NOOPs until the deadline answers instead (the session's deadline is 1 s).
    let last = await c.cmd('NOOP');
    while (last && last.code === 250) last = await c.cmd('NOOP');
    expect(last?.text).toMatch(/^421 4\.7\.0 Session took too long/);
    await c.quit();
  });
});
