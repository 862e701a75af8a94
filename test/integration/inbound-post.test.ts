/**
 * Processing of received routed mail after its 250 (issue 33), through a real daemon: the
 * message arrives over SMTP on loopback, is verified and parsed, and POSTed as JSON to a webhook
 * receiver on loopback that checks the signature (`t=…,v1=…` with the route's payloadSigningKey);
 * a URL that answers 500 forever is retried with backoff and the message ends `failed` with every
 * attempt and answer kept (nothing lost); a route deleted while its message waits ends it
 * `failed`; and a message committed while processing was down is processed after a restart.
 */
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InboundMessage } from '../../src/domain/inbound-message.js';
import { verifySignature, SIGNATURE_HEADER } from '../../src/webhooks/signature.js';
import { startDaemonWithDns, stopDaemonWithDns, type TestDaemon } from '../support/daemon.js';
import type { TestDns } from '../support/dns-server.js';
import { newChannel, newVerifiedDomain, uniqueName } from '../support/domains.js';
import { waitFor } from '../support/wait.js';
import { SmtpWire } from '../support/smtp-wire.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

let t: TestDaemon;
let dns: TestDns;
let receiver: WebhookReceiver;
let channelId: string;
let domain: string;

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  ({ t, dns } = await startDaemonWithDns({
    'inbound.enabled': true,
    'inbound.port': 0,
    'webhooks.allowHttp': true,
    'webhooks.allowPrivate': true,
    'webhooks.retryBaseMs': 50,
    // Retried for 2 s after receipt, then failed: the 24 h of production, shortened.
    'inbound.postMaxAgeMs': 2000,
  }));
  channelId = await newChannel(t);
  domain = (await newVerifiedDomain(t, dns, { name: uniqueName('in'), channelIds: [channelId] })).name;
}, 60_000);

afterAll(async () => {
  await stopDaemonWithDns({ t, dns });
  await receiver?.close();
});

async function route(local: string, path: string): Promise<{ id: string; payloadSigningKey: string }> {
  const res = await t.api('POST', '/inbound/routes', { body: { channelId, address: `${local}@${domain}`, url: receiver.url(path) } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

async function send(to: string, subject: string): Promise<string> {
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port: t.daemon.inbound!.port, secure: false, ignoreTLS: true });
  try {
    const info = await transport.sendMail({
      envelope: { from: 'ann@example.org', to: [to] },
      from: 'Ann Émile <ann@example.org>',
      to,
      subject,
      text: 'Hallo, schöne Grüße!\n\nOn Mon, Bob wrote:\n> earlier text\n',
      attachments: [{ filename: 'notiz-ä.txt', content: Buffer.from('Inhalt der Notiz') }],
    });
    return info.response;
  } finally {
    transport.close();
  }
}

/** Sends `raw` over a bare SMTP session, byte for byte (no client re-encodes its header); resolves with the reply to the final dot. */
async function sendBytes(to: string, raw: Buffer): Promise<string> {
  const c = await SmtpWire.connect(t.daemon.inbound!.port);
  try {
    await c.reply();
    await c.cmd('EHLO old-mailer.example.de');
    await c.cmd('MAIL FROM:<joerg@example.de>');
    expect((await c.cmd(`RCPT TO:<${to}>`))!.code).toBe(250);
    expect((await c.cmd('DATA'))!.code).toBe(354);
    c.write(Buffer.concat([raw, Buffer.from('.\r\n')]));
    return (await c.reply(30_000))!.text;
  } finally {
    await c.quit();
  }
}

async function only(routeId: string): Promise<InboundMessage | undefined> {
  const [m] = (await t.daemon.store.inboundMessages.list({ accountId: t.accountId, routeId, limit: 10 })).results;
  return m;
}

const settled = (routeId: string, status: InboundMessage['status']) =>
  waitFor(async () => ((await only(routeId))?.status === status ? only(routeId) : undefined), { what: `the message of route ${routeId} ${status}`, timeout: 20_000 });

describe('posting received mail', () => {
  it("POSTs the parsed message to the route's URL, signed with its payloadSigningKey, and ends posted", async () => {
    const r = await route('support', '/ok');
    // SPF (RFC 7208) of the MAIL FROM domain, through the test DNS server: this client is allowed.
    dns.set('example.org', 'TXT', ['v=spf1 ip4:127.0.0.1 -all']);
    expect(await send(`support+4711@${domain}`, 'Frage zur Bestellung')).toMatch(/^250/);
    const m = await settled(r.id, 'posted');
    const [req] = receiver.at('/ok');
    expect(verifySignature({ key: r.payloadSigningKey, body: req.body, header: String(req.headers[SIGNATURE_HEADER]), nowSeconds: Date.now() / 1000 })).toBe(true);
    expect(req.headers['x-service-webhook-id']).toBe(m!.id);
    expect(req.json).toMatchObject({
      id: m!.id,
      routeId: r.id,
      envelope: { mailFrom: 'ann@example.org', rcptTo: [`support+4711@${domain}`] },
      from: { address: 'ann@example.org', name: 'Ann Émile' },
      subject: 'Frage zur Bestellung',
      mailboxHash: '4711',
      strippedTextReply: 'Hallo, schöne Grüße!',
      attachments: [{ filename: 'notiz-ä.txt', contentType: 'text/plain', size: 16, content: Buffer.from('Inhalt der Notiz').toString('base64') }],
      auth: { spf: { result: 'pass', domain: 'example.org' }, dkim: [], dmarc: { result: expect.any(String) }, arc: { result: 'none' } },
    });
    expect(m).toMatchObject({ attempts: [{ statusCode: 200, error: null }], nextAttemptAt: null, processedAt: expect.any(String), auth: { spf: expect.any(Object) } });
  });

  it('gives names and a Subject sent in raw Latin-1 bytes their letters in the POST, beside UTF-8 and encoded-word ones', async () => {
    const r = await route('latin1', '/latin1');
    // An old mailer's header: 8-bit Latin-1 with no RFC 2047 encoding (0x96 is windows-1252's en dash).
    const raw = Buffer.concat([
      Buffer.from('From: J\xf6rg M\xfcller <joerg@example.de>\r\nSubject: Gr\xfc\xdfe \x96 Rechnung\r\n', 'latin1'),
      // UTF-8 fields stay UTF-8 (RFC 6532), and encoded-words decode as before.
      Buffer.from(`To: Zoë Ünal <latin1@${domain}>\r\nCc: =?ISO-8859-1?Q?Fran=E7oise?= <fr@example.fr>\r\n`, 'utf8'),
      Buffer.from('Reply-To: B\xfcro <buero@example.de>\r\n\r\nHallo\r\n', 'latin1'),
    ]);
    expect(await sendBytes(`latin1@${domain}`, raw)).toMatch(/^250/);
    await settled(r.id, 'posted');
    const [req] = receiver.at('/latin1');
    expect(req.json).toMatchObject({
      from: { address: 'joerg@example.de', name: 'Jörg Müller' },
      to: [{ address: `latin1@${domain}`, name: 'Zoë Ünal' }],
      cc: [{ address: 'fr@example.fr', name: 'Françoise' }],
      replyTo: [{ address: 'buero@example.de', name: 'Büro' }],
      subject: 'Grüße – Rechnung',
    });
    expect(req.body).not.toContain('\ufffd');
  });

  it('retries a URL that answers 500 forever with backoff, then ends failed with every attempt kept', async () => {
    receiver.on('/broken', () => ({ status: 500, body: 'down for maintenance' }));
    const r = await route('broken', '/broken');
    await send(`broken@${domain}`, 'Will not arrive');
    const m = await settled(r.id, 'failed');
    const tries = receiver.at('/broken');
    expect(tries.length).toBeGreaterThanOrEqual(3);
    expect(new Set(tries.map((x) => x.headers['x-service-webhook-id']))).toEqual(new Set([m!.id]));
    expect(tries.map((x) => x.headers['x-service-webhook-attempt'])).toEqual(tries.map((_, i) => String(i + 1)));
    expect(m!.attempts).toHaveLength(tries.length);
    expect(m!.attempts.every((a) => a.statusCode === 500 && /500/.test(a.error ?? ''))).toBe(true);
    // Nothing lost: the message as received is still there.
    expect((await t.daemon.store.inboundMessages.raw(m!.id))!.toString()).toContain('Subject: Will not arrive');
  });

  it('processes after a restart what was committed while processing was down, and fails a message whose route went away', async () => {
    const kept = await route('kept', '/kept');
    const gone = await route('gone', '/gone');
    await t.daemon.inboundPoster!.stop();
    expect(await send(`kept@${domain}`, 'Committed while down')).toMatch(/^250/);
    expect(await send(`gone@${domain}`, 'Route deleted meanwhile')).toMatch(/^250/);
    expect((await only(kept.id))?.status).toBe('received');
    expect((await t.api('DELETE', `/inbound/routes/${gone.id}`)).status).toBe(204);
    await t.restart();
    expect((await settled(kept.id, 'posted'))!.attempts).toHaveLength(1);
    expect(receiver.at('/kept').map((x) => x.json.subject)).toEqual(['Committed while down']);
    expect((await settled(gone.id, 'failed'))!.attempts).toEqual([{ at: expect.any(String), statusCode: null, error: 'route deleted' }]);
    expect(receiver.at('/gone')).toEqual([]);
  });
});
