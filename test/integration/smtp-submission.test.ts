import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { simpleParser } from 'mailparser';
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemonWithDns, stopDaemonWithDns, type TestDaemon } from '../support/daemon.js';
import type { TestDns } from '../support/dns-server.js';
import { setupSender, type Sender } from '../support/sending.js';
import { signedBody } from '../support/signing.js';
import { TEST_STORE_ENGINE } from '../support/store.js';
import { SmtpWire } from '../support/smtp-wire.js';
import { securedSession } from '../support/smtp-tls-records.js';
import { freePort } from '../support/cli.js';

const run = promisify(execFile);

let dns: TestDns;
let t: TestDaemon;
let s: Sender;

function transport(opts: { user?: string; pass?: string; secure?: boolean; ignoreTLS?: boolean; requireTLS?: boolean; host?: string } = {}) {
  return nodemailer.createTransport({
    host: opts.host ?? '127.0.0.1',
    port: t.daemon.smtp!.port,
    secure: false,
    ignoreTLS: opts.ignoreTLS ?? false,
    requireTLS: opts.requireTLS ?? true,
    tls: { rejectUnauthorized: false },
    auth: opts.user === undefined && opts.pass === undefined ? undefined : { user: opts.user ?? '', pass: opts.pass ?? '' },
  } as Parameters<typeof nodemailer.createTransport>[0]);
}

beforeAll(async () => {
  ({ t, dns } = await startDaemonWithDns({
    'smtp.enabled': true,
    'smtp.port': 0,
    'smtp.implicitTlsPort': await freePort(),
    'smtp.maxMessageSize': 64 * 1024,
    'smtp.authFailureLimit': 3,
  }));
  s = await setupSender(t, dns);
});

afterAll(() => stopDaemonWithDns({ t, dns }));

const mail = (extra: Record<string, unknown> = {}) => ({
  from: `App <app@${s.domain}>`,
  to: 'alice@example.net',
  subject: 'Receipt',
  text: 'Thanks!',
  ...extra,
});

describe('SMTP submission', () => {
  it('accepts an authenticated message over STARTTLS, signs it and stores it with mailSource smtp', async () => {
    const info = await transport({ user: s.channelId, pass: t.apiKey }).sendMail(
      mail({ cc: 'bob@example.org', bcc: 'hidden@example.org', headers: { 'X-Tags': 'receipt, smtp', 'X-Metadata': '{"order":"77"}' } }),
    );
    const id = /queued as ([0-9a-f-]{36})/.exec(info.response)![1];
    expect(info.response).toMatch(/^250 2\.0\.0 /);
    const m = (await t.daemon.store.messages.get(id))!;
    expect(m).toMatchObject({ mailSource: 'smtp', subject: 'Receipt', tags: ['receipt', 'smtp'], metadata: { order: '77' }, status: 'queued' });
    expect(m.recipients.sort()).toEqual(['alice@example.net', 'bob@example.org', 'hidden@example.org']);
    expect(m.bcc).toEqual([{ email: 'hidden@example.org' }]);
    const parsed = await simpleParser(await signedBody(t.daemon.store, id));
    expect(parsed.headers.get('dkim-signature')).toBeDefined();
    for (const h of ['x-tags', 'x-metadata', 'bcc']) expect(parsed.headers.has(h)).toBe(false);
    expect((await t.daemon.store.events.ofMessage(id)).map((e) => [e.eventType, e.mailSource])).toEqual([
      ['accepted', 'smtp'],
      ['processed', 'smtp'],
    ]);
  });

  it('accepts a message over implicit TLS (RFC 8314) on smtp.implicitTlsPort, greeted inside TLS', async () => {
    const client = nodemailer.createTransport({
      host: '127.0.0.1',
      port: t.daemon.smtp!.implicitTlsPort,
      secure: true,
      tls: { rejectUnauthorized: false },
      auth: { user: s.channelId, pass: t.apiKey },
    });
    const info = await client.sendMail(mail({ subject: 'Over 465' }));
    expect(info.response).toMatch(/^250 2\.0\.0 Ok: queued as /);
    const id = /queued as ([0-9a-f-]{36})/.exec(info.response)![1];
    expect(await t.daemon.store.messages.get(id)).toMatchObject({ mailSource: 'smtp', subject: 'Over 465' });
  });

  it('accepts a channel key with the username "api"', async () => {
    const { token } = await t.daemon.store.apiKeys.create({ accountId: t.accountId, channelId: s.channelId });
    const info = await transport({ user: 'api', pass: token }).sendMail(mail());
    expect(info.response).toMatch(/^250 /);
  });

  it('is no open relay: mail without AUTH is refused with 530', async () => {
    const client = transport();
    await expect(client.sendMail(mail())).rejects.toMatchObject({ responseCode: 530 });
  });

  it('refuses a sender domain the channel may not use with 550 5.7.1', async () => {
    const client = transport({ user: s.channelId, pass: t.apiKey });
    const err = await client.sendMail(mail({ from: 'ceo@bank.example.com' })).catch((e) => e);
    expect(err.responseCode).toBe(550);
    expect(err.response).toMatch(/^550 5\.7\.1 /);
  });

  it('refuses a From header on a foreign domain even when MAIL FROM is allowed', async () => {
    const client = transport({ user: s.channelId, pass: t.apiKey });
    const err = await client
      .sendMail({ envelope: { from: `app@${s.domain}`, to: ['alice@example.net'] }, from: 'spoof@bank.example.com', to: 'alice@example.net', subject: 's', text: 't' })
      .catch((e) => e);
    expect(err.response).toMatch(/^550 5\.7\.1 From spoof@bank\.example\.com: /);
  });

  it('refuses a routing address in MAIL FROM with 553 5.1.7 and in RCPT TO with 553 5.1.3', async () => {
    const c = await SmtpWire.connect(t.daemon.smtp!.port);
    expect((await c.login(s.channelId, t.apiKey))?.code).toBe(235);
    expect((await c.cmd(`MAIL FROM:<app%relay.example@${s.domain}>`))?.text).toMatch(/^553 5\.1\.7 Bad sender address: /);
    expect((await c.cmd(`MAIL FROM:<app@${s.domain}>`))?.code).toBe(250);
    expect((await c.cmd('RCPT TO:<ann%elsewhere.example@example.net>'))?.text).toMatch(/^553 5\.1\.3 Bad recipient address: /);
    await c.quit();
  });

  it('answers 452 4.5.3 to the 51st recipient', async () => {
    const to = Array.from({ length: 51 }, (_, i) => `r${i}@example.net`);
    // nodemailer goes on with the 50 accepted recipients and reports the refused one.
    const info = await transport({ user: s.channelId, pass: t.apiKey }).sendMail(mail({ to }));
    expect(info.accepted).toHaveLength(50);
    expect(info.rejected).toEqual(['r50@example.net']);
    expect(info.rejectedErrors?.[0]?.response ?? '').toMatch(/^452 4\.5\.3/);
  });

  it('refuses a suppressed recipient at RCPT and accepts the others', async () => {
    await t.api('POST', '/suppressions', { body: { channelId: s.channelId, mailType: 'transactional', emails: ['gone@example.net'] } });
    const info = await transport({ user: s.channelId, pass: t.apiKey }).sendMail(mail({ to: ['gone@example.net', 'here@example.net'] }));
    expect(info.rejected).toEqual(['gone@example.net']);
    expect(info.accepted).toEqual(['here@example.net']);
  });

  it('refuses messages over the size limit with 552 and advertises SIZE', async () => {
    const err = await transport({ user: s.channelId, pass: t.apiKey }).sendMail(mail({ text: 'x'.repeat(100 * 1024) })).catch((e) => e);
    expect(err.responseCode).toBe(552);
  });

  it('allows AUTH without TLS from loopback (other clients must STARTTLS first: see test/unit/smtp-policy)', async () => {
    const info = await transport({ user: s.channelId, pass: t.apiKey, ignoreTLS: true, requireTLS: false }).sendMail(mail());
    expect(info.response).toMatch(/^250 /);
  });

  it('takes a swaks submission end to end', async () => {
    const swaks = await run('which', ['swaks']).then(() => true, () => false);
    if (!swaks) throw new Error('swaks is not installed (.ci/run installs it)');
    const { stdout } = await run('swaks', [
      '--server', '127.0.0.1', '--port', String(t.daemon.smtp!.port), '--tls', '--auth', 'PLAIN',
      '--auth-user', s.channelId, '--auth-password', t.apiKey, '--from', `app@${s.domain}`, '--to', 'swaks@example.net',
      '--header', 'Subject: via swaks', '--body', 'hello',
    ]);
    const id = /queued as ([0-9a-f-]{36})/.exec(stdout)![1];
    expect((await t.daemon.store.messages.get(id))).toMatchObject({ subject: 'via swaks', mailSource: 'smtp' });
  });
  // Last: after it the channel's user name is locked for 127.0.0.1 for the rest of this daemon's life.
  it('refuses wrong credentials with 535 5.7.8 and locks a user name after repeated failures, not the other users of the address', async () => {
    await expect(transport({ user: s.channelId, pass: 'pr_wrong' }).sendMail(mail())).rejects.toMatchObject({ responseCode: 535 });
    await expect(transport({ user: s.channelId, pass: 'pr_wrong2' }).sendMail(mail())).rejects.toMatchObject({ responseCode: 535 });
    await expect(transport({ user: s.channelId, pass: 'pr_wrong3' }).sendMail(mail())).rejects.toMatchObject({ responseCode: 535 });
    // Third failure reached the limit: even the right password is refused now for this user name.
    const locked = await transport({ user: s.channelId, pass: t.apiKey }).sendMail(mail()).catch((e) => e);
    expect(locked).toMatchObject({ responseCode: 454 });
    expect(locked.response).toMatch(/^454 4\.7\.0 /);
    // Another user behind the same address authenticates as usual.
    const { token } = await t.daemon.store.apiKeys.create({ accountId: t.accountId, channelId: s.channelId });
    expect((await transport({ user: 'api', pass: token }).sendMail(mail())).response).toMatch(/^250 /);
  });

});

/** The last line of the next reply (undefined when the server closed first). */
async function lastLine(wire: SmtpWire): Promise<string | undefined> {
  const r = await wire.reply();
  return r?.lines[r.lines.length - 1];
}

const pipelinedMessage = (to: string) => `From: <app@${s.domain}>\r\nTo: <${to}>\r\nSubject: pipelined\r\n\r\nHello\r\n.\r\n`;

/**
 * Replies to a pipelined group (RFC 2920) leave together: MAIL FROM, RCPT TO and DATA sent in one
 * write get their three replies in one write, on TLS one record (src/smtp/wire-server.ts
 * coalesceReplies); a refusal in the group keeps the order; a client that waits for each reply
 * gets it without delay.
 */
describe('SMTP submission with a pipelining client (RFC 2920)', () => {
  // A channel key of its own (user name "api"): the test above locks the channel id's user name.
  let key: string;
  beforeAll(async () => {
    ({ token: key } = await t.daemon.store.apiKeys.create({ accountId: t.accountId, channelId: s.channelId }));
  });
  const session = () => securedSession(t.daemon.smtp!.port, 'api', key);

  // On LMDB the commands' checks answer without waiting for I/O, so the three replies are
  // written in one turn. On PostgreSQL MAIL FROM's checks wait for the database, and its reply
  // leaves before RCPT TO is read: a reply is never held past its turn (coalesceReplies).
  it.skipIf(TEST_STORE_ENGINE !== 'lmdb')('answers MAIL FROM, RCPT TO and DATA sent in one write with one TLS record, each transaction', async () => {
    const { wire, records, ehlo } = await session();
    expect(ehlo).toContain('250-PIPELINING');
    for (const to of ['first@example.org', 'second@example.org']) {
      const before = records();
      wire.write(`MAIL FROM:<app@${s.domain}>\r\nRCPT TO:<${to}>\r\nDATA\r\n`);
      expect(await lastLine(wire)).toMatch(/^250 /);
      expect(await lastLine(wire)).toMatch(/^250 /);
      expect(await lastLine(wire)).toMatch(/^354 /);
      expect(records() - before).toBe(1);
      wire.write(pipelinedMessage(to));
      expect(await lastLine(wire)).toMatch(/^250 .*queued/i);
      expect(records() - before).toBe(2);
    }
    wire.close();
  });

  it('keeps the replies in order when a command of the group is refused', async () => {
    const { wire } = await session();
    wire.write(`MAIL FROM:<app@${s.domain}>\r\nRCPT TO:<not an address>\r\nRCPT TO:<ok@example.org>\r\nDATA\r\n`);
    expect(await lastLine(wire)).toMatch(/^250 /);
    expect(await lastLine(wire)).toMatch(/^5\d\d /);
    expect(await lastLine(wire)).toMatch(/^250 /);
    expect(await lastLine(wire)).toMatch(/^354 /);
    wire.write(pipelinedMessage('ok@example.org'));
    expect(await lastLine(wire)).toMatch(/^250 /);
    wire.close();
  });

  it('answers a client that waits for each reply without holding any back', async () => {
    const { wire } = await session();
    wire.write(`MAIL FROM:<app@${s.domain}>\r\n`);
    expect(await lastLine(wire)).toMatch(/^250 /);
    wire.write('RCPT TO:<one@example.org>\r\n');
    expect(await lastLine(wire)).toMatch(/^250 /);
    wire.write('DATA\r\n');
    expect(await lastLine(wire)).toMatch(/^354 /);
    wire.write(pipelinedMessage('one@example.org'));
    expect(await lastLine(wire)).toMatch(/^250 /);
    wire.write('QUIT\r\n');
    expect(await lastLine(wire)).toMatch(/^221 /);
    wire.close();
  });
});
