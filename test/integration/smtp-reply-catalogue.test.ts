/**
 * Every reply the SMTP listeners write comes from one catalogue (SMTP_REPLIES in smtp/replies.ts
 * and the SMTP column of domain/errors.ts), and is announced as RFC 2034 says (issue 21, defect
 * 8): EHLO lists ENHANCEDSTATUSCODES on the submission and the inbound listener, the greeting
 * says ESMTP once, 530 carries 5.7.0 (RFC 4954 6), and each catalogue entry is mapped below to a
 * real SMTP exchange that gets exactly that reply, here or in the named test file.
 */
import fs from 'node:fs';
import os from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SMTP_REPLIES, type SmtpReplyName } from '../../src/smtp/replies.js';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import { startDnsServer, type TestDns } from '../support/dns-server.js';
import { setupSender, type Sender } from '../support/sending.js';
import { SmtpWire, type SmtpReply } from '../support/smtp-wire.js';

let dns: TestDns;
let t: TestDaemon;
let s: Sender;

/** A non-loopback address of this machine, if it has one: AUTH from it needs TLS. */
const external = Object.values(os.networkInterfaces())
  .flat()
  .find((a) => a && a.family === 'IPv4' && !a.internal)?.address;

beforeAll(async () => {
  dns = await startDnsServer();
  t = await startDaemon({
    'dns.servers': [dns.address],
    'smtp.enabled': true,
    'smtp.port': 0,
    // Every local address, so a client on a non-loopback one can be told to STARTTLS first.
    'smtp.host': external ? '0.0.0.0' : '127.0.0.1',
    'smtp.maxMessageSize': 4096,
    'smtp.authFailureLimit': 2,
    'inbound.enabled': true,
    'inbound.port': 0,
  });
  s = await setupSender(t, dns);
});

afterAll(async () => {
  await t?.stop();
  await dns?.close();
});

const own = () => `app@${s.domain}`;

/** "code enhanced" of a reply, e.g. "550 5.7.1". */
function codes(r: SmtpReply | null): string {
  return /^(\d{3}) ([245]\.\d+\.\d+) /.exec(r?.lines.at(-1) ?? '')?.slice(1).join(' ') ?? `(no enhanced code: ${r?.text ?? 'closed'})`;
}

function expected(name: SmtpReplyName): string {
  return `${SMTP_REPLIES[name].code} ${SMTP_REPLIES[name].enhanced}`;
}

/** A submission session after EHLO and a successful AUTH. */
async function session(): Promise<SmtpWire> {
  const c = await SmtpWire.connect(t.daemon.smtp!.port);
  expect((await c.login(s.channelId, t.apiKey))?.code).toBe(235);
  return c;
}

/** Submits `head` + a small body; the DATA reply. */
async function submit(head: string, opts: { body?: string } = {}): Promise<SmtpReply | null> {
  const c = await session();
  try {
    await c.cmd(`MAIL FROM:<${own()}>`);
    await c.cmd('RCPT TO:<ann@example.net>');
    return await c.data(`${head}\r\nTo: <ann@example.net>\r\nSubject: replies\r\n\r\n${opts.body ?? 'body'}\r\n`);
  } finally {
    await c.quit();
  }
}

describe('SMTP announcements', () => {
  it('greets with ESMTP once and lists ENHANCEDSTATUSCODES in EHLO (submission)', async () => {
    const c = await SmtpWire.connect(t.daemon.smtp!.port);
    const greeting = (await c.reply())!.text;
    expect(greeting).toBe(`220 ${t.config.hostname} ESMTP postrider submission`);
    expect(greeting.match(/ESMTP/g)).toHaveLength(1);
    expect((await c.cmd('EHLO client.example'))!.lines).toContain('250-ENHANCEDSTATUSCODES');
    await c.quit();
  });

  it('greets with ESMTP once and lists ENHANCEDSTATUSCODES in EHLO (inbound)', async () => {
    const c = await SmtpWire.connect(t.daemon.inbound!.port);
    const greeting = (await c.reply())!.text;
    expect(greeting).toBe(`220 ${t.config.hostname} ESMTP postrider`);
    expect((await c.cmd('EHLO mx.example'))!.lines).toContain('250-ENHANCEDSTATUSCODES');
    await c.quit();
  });
});

/** The exchanges of this file, one per catalogue entry they trigger; each returns the reply. */
const HERE: Partial<Record<SmtpReplyName, () => Promise<SmtpReply | null>>> = {
  authRequired: async () => {
    const c = await SmtpWire.connect(t.daemon.smtp!.port);
    await c.reply();
    await c.cmd('EHLO client.example');
    const r = await c.cmd(`MAIL FROM:<${own()}>`);
    await c.quit();
    return r;
  },
  authInvalid: async () => {
    const c = await SmtpWire.connect(t.daemon.smtp!.port);
    const r = await c.login('api', 'not-a-key');
    await c.quit();
    return r;
  },
  authzidRefused: async () => {
    // Right credentials, but asking to act as someone else (RFC 4616 2).
    const c = await SmtpWire.connect(t.daemon.smtp!.port);
    await c.reply();
    await c.cmd('EHLO client.example');
    const r = await c.cmd(`AUTH PLAIN ${Buffer.from(`someone-else\0${s.channelId}\0${t.apiKey}`).toString('base64')}`);
    // The same credentials with an empty authzid, or the user name as authzid, are taken.
    for (const authzid of ['', s.channelId]) {
      const ok = await SmtpWire.connect(t.daemon.smtp!.port);
      await ok.reply();
      await ok.cmd('EHLO client.example');
      expect((await ok.cmd(`AUTH PLAIN ${Buffer.from(`${authzid}\0${s.channelId}\0${t.apiKey}`).toString('base64')}`))?.code).toBe(235);
      await ok.quit();
    }
    await c.quit();
    return r;
  },
  authUserLocked: async () => {
    // smtp.authFailureLimit is 2: the third attempt of a user name is refused. A user name of its
    // own, so the other exchanges' sessions are not locked out.
    const user = '00000000-0000-4000-8000-000000000000';
    for (let i = 0; i < 2; i++) {
      const c = await SmtpWire.connect(t.daemon.smtp!.port);
      expect((await c.login(user, 'wrong'))?.code).toBe(535);
      await c.quit();
    }
    const c = await SmtpWire.connect(t.daemon.smtp!.port);
    const r = await c.login(user, 'wrong');
    await c.quit();
    return r;
  },
  badSender: async () => {
    const c = await session();
    const r = await c.cmd(`MAIL FROM:<app%relay.example@${s.domain}>`);
    await c.quit();
    return r;
  },
  badRecipient: async () => {
    const c = await session();
    await c.cmd(`MAIL FROM:<${own()}>`);
    const r = await c.cmd('RCPT TO:<ann%elsewhere.example@example.net>');
    await c.quit();
    return r;
  },
  tooManyRecipients: async () => {
    const c = await session();
    await c.cmd(`MAIL FROM:<${own()}>`);
    for (let i = 0; i < 50; i++) expect((await c.cmd(`RCPT TO:<r${i}@example.net>`))?.code).toBe(250);
    const r = await c.cmd('RCPT TO:<r50@example.net>');
    await c.quit();
    return r;
  },
  messageTooLarge: () => submit(`From: <${own()}>`, { body: 'x'.repeat(70) + '\r\n'.repeat(1) + ('y'.repeat(70) + '\r\n').repeat(80) }),
  messageHasNul: () => submit(`From: <${own()}>`, { body: 'hello\0world' }),
  queued: () => submit(`From: <${own()}>`),
  noSuchMailbox: async () => {
    const c = await SmtpWire.connect(t.daemon.inbound!.port);
    await c.reply();
    await c.cmd('EHLO mx.example');
    await c.cmd('MAIL FROM:<>');
    const r = await c.cmd('RCPT TO:<someone@elsewhere.example>');
    await c.quit();
    return r;
  },
  received: async () => {
    const c = await SmtpWire.connect(t.daemon.inbound!.port);
    await c.reply();
    await c.cmd('EHLO mx.example');
    await c.cmd('MAIL FROM:<>');
    expect((await c.cmd(`RCPT TO:<${t.config.domains.returnPathLabel}@${t.config.domains.returnPathLabel}.${s.domain}>`))?.code).toBe(250);
    const r = await c.data('From: <mailer-daemon@mx.example>\r\nSubject: not a report\r\n\r\nhello\r\n');
    await c.quit();
    return r;
  },
  encryptionRequired: async () => {
    const c = await SmtpWire.connect(t.daemon.smtp!.port, { host: external });
    const r = await c.login(s.channelId, t.apiKey);
    await c.quit();
    return r;
  },
};

/** Entries whose exchange needs a set-up of its own (shutdown, connection floods), tested there. */
const ELSEWHERE: Partial<Record<SmtpReplyName, string>> = {
  shuttingDown: 'test/integration/smtp-shutdown.test.ts',
  listenerFull: 'test/integration/security-smtp-exhaustion.test.ts',
  tooManyFromAddress: 'test/integration/security-smtp-exhaustion.test.ts',
  authTimeout: 'test/integration/security-smtp-exhaustion.test.ts',
  authThrottled: 'test/integration/security-smtp-exhaustion.test.ts',
  sessionTimeout: 'test/integration/inbound-receive.test.ts',
  // A valid key whose user name does not fit its kind (the key and its channel are made there).
  authAccountKeyUser: 'test/integration/smtp-first-hour.test.ts',
  authChannelKeyUser: 'test/integration/smtp-first-hour.test.ts',
  authNoSuchChannel: 'test/integration/smtp-first-hour.test.ts',
};

describe('every SMTP_REPLIES entry, from a real exchange', () => {
  it('maps each entry to an exchange here or to the test file that makes it', () => {
    const mapped = Object.keys(SMTP_REPLIES).filter((n) => HERE[n as SmtpReplyName] || ELSEWHERE[n as SmtpReplyName]);
    expect(mapped.sort()).toEqual(Object.keys(SMTP_REPLIES).sort());
    for (const [name, file] of Object.entries(ELSEWHERE)) {
      expect(fs.readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8'), `${name} in ${file}`).toContain(expected(name as SmtpReplyName));
    }
  });

  for (const [name, exchange] of Object.entries(HERE)) {
    const skip = name === 'encryptionRequired' && !external;
    it.skipIf(skip)(`${name}: ${expected(name as SmtpReplyName)} ${SMTP_REPLIES[name as SmtpReplyName].text}`, async () => {
      const r = await exchange();
      expect(codes(r)).toBe(expected(name as SmtpReplyName));
      expect(r!.lines.at(-1)).toContain(SMTP_REPLIES[name as SmtpReplyName].text);
    });
  }
});

describe('catalogue errors on SMTP (domain/errors.ts)', () => {
  it('a From on a domain the channel may not use: forbidden, 550 5.7.1 (RFC 3463: delivery not authorized)', async () => {
    expect(codes(await submit('From: <ceo@bank.example.com>'))).toBe('550 5.7.1');
  });

  it('a malformed header block (two From fields): validation_failed, 550 5.6.0', async () => {
    expect(codes(await submit(`From: <${own()}>\r\nFrom: <${own()}>`))).toBe('550 5.6.0');
  });
});
