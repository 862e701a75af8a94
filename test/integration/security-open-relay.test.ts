/**
 * Open-relay probes on the SMTP submission listener, sent byte for byte (test/support/smtp-wire):
 * the classic relay-test addresses (source routes, percent hack, bang paths, quoted local parts,
 * address literals) without AUTH, with wrong AUTH, and with valid AUTH but a sender the channel
 * may not use (a foreign domain, or a routing trick that hides one behind ours). Nothing may be
 * accepted: no 250 to MAIL FROM or RCPT TO where one would mean relaying, and no message stored.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemonWithDns, stopDaemonWithDns, type TestDaemon } from '../support/daemon.js';
import type { TestDns } from '../support/dns-server.js';
import { newAccount } from '../support/domains.js';
import { setupSender, type Sender } from '../support/sending.js';
import { SmtpWire } from '../support/smtp-wire.js';

let dns: TestDns;
let t: TestDaemon;
let ours: Sender;
let theirs: Sender;
let port: number;

beforeAll(async () => {
  ({ t, dns } = await startDaemonWithDns({ 'smtp.enabled': true, 'smtp.port': 0, 'smtp.authFailureLimit': 10_000 }));
  port = t.daemon.smtp!.port;
  ours = await setupSender(t, dns);
  // A second account with its own verified domain: a valid sender, but not for our channel.
  const { key: otherKey } = await newAccount(t);
  theirs = await setupSender(t, dns, { key: otherKey });
});

afterAll(() => stopDaemonWithDns({ t, dns }));

/** Recipients a relay checker tries: each would make us carry mail to evil.example. */
function relayRecipients(): string[] {
  const d = ours.domain;
  return [
    'victim@evil.example',
    `@${d}:victim@evil.example`,
    `@${d},@relay.example:victim@evil.example`,
    `victim%evil.example@${d}`,
    `"victim@evil.example"@${d}`,
    `"victim%evil.example"@${d}`,
    `evil.example!victim@${d}`,
    `victim@evil.example@${d}`,
    `victim%evil.example@[127.0.0.1]`,
    'victim@[127.0.0.1]',
    `victim@evil.example.`,
    'victim@evil.example\\@' + d,
  ];
}

/** Senders that are not ours, plainly or hidden behind our domain. */
function foreignSenders(): string[] {
  const d = ours.domain;
  return [
    'spoof@evil.example',
    `spoof@${theirs.domain}`,
    `@${d}:spoof@evil.example`,
    `@${d},@relay.example:spoof@${theirs.domain}`,
    `spoof%evil.example@${d}`,
    `"spoof@evil.example"@${d}`,
    `"spoof%evil.example"@${d}`,
    `evil.example!spoof@${d}`,
    `spoof@evil.example@${d}`,
    `spoof@${d}.evil.example`,
    `spoof@sub.${d}`,
    `spoof@[127.0.0.1]`,
    '',
  ];
}

async function storedRecipients(): Promise<string[]> {
  return (await t.daemon.store.messages.all()).flatMap((m) => m.recipients);
}

async function storedSenders(): Promise<string[]> {
  return (await t.daemon.store.messages.all()).map((m) => m.from.email);
}

const MESSAGE = (from: string) => `From: <${from}>\r\nTo: <victim@evil.example>\r\nSubject: relay test\r\n\r\nrelayed?\r\n`;

describe('without AUTH', () => {
  // smtp-server holds every greeting 100 ms (early-talker detection) and closes a connection
  // after 10 unauthenticated commands, so probes share a connection two at a time.
  async function unauthenticated(probes: string[], run: (c: SmtpWire, probe: string) => Promise<void>): Promise<void> {
    for (let i = 0; i < probes.length; i += 2) {
      const c = await SmtpWire.connect(port);
      await c.reply();
      await c.cmd('EHLO probe.example');
      for (const probe of probes.slice(i, i + 2)) {
        await run(c, probe);
        await c.cmd('RSET');
      }
      await c.quit();
    }
  }

  it('refuses MAIL FROM with 530 for every sender, ours included', async () => {
    await unauthenticated([`app@${ours.domain}`, ...foreignSenders()], async (c, from) => {
      const mail = await c.cmd(`MAIL FROM:<${from}>`);
      expect(mail?.code, `${from}: ${mail?.text}`).toBeGreaterThanOrEqual(500);
      if (from === `app@${ours.domain}`) expect(mail?.text).toMatch(/^530 /);
    });
  });

  it('never answers 250 to RCPT TO or DATA, whatever the address', async () => {
    await unauthenticated(relayRecipients(), async (c, rcpt) => {
      await c.cmd(`MAIL FROM:<app@${ours.domain}>`);
      const r = await c.cmd(`RCPT TO:<${rcpt}>`);
      expect(r?.code, `${rcpt}: ${r?.text}`).toBeGreaterThanOrEqual(500);
      const data = await c.cmd('DATA');
      expect(data?.code).toBeGreaterThanOrEqual(500);
    });
  });

  it('does not take AUTH with a wrong or foreign key, and still refuses MAIL FROM after it', async () => {
    for (const [user, pass] of [
      [ours.channelId, 'pr_notAKeyNotAKeyNotAKeyNotAKey'],
      [ours.channelId, ''],
      ['api', t.apiKey], // an account key needs the channel id as the user name
      [theirs.channelId, t.apiKey], // our key, their channel
      [t.apiKey, ours.channelId], // user name and password swapped
    ]) {
      const c = await SmtpWire.connect(port);
      const r = await c.login(user, pass);
      expect(r?.code, `${user}`).toBe(535);
      expect((await c.cmd(`MAIL FROM:<app@${ours.domain}>`))?.code).toBe(530);
      await c.quit();
    }
  });
});

describe('with AUTH', () => {
  async function authed(): Promise<SmtpWire> {
    const c = await SmtpWire.connect(port);
    const auth = await c.login(ours.channelId, t.apiKey);
    expect(auth?.code).toBe(235);
    return c;
  }

  it('refuses every sender the channel may not use with a 5xx at MAIL FROM', async () => {
    const accepted: string[] = [];
    const c = await authed();
    for (const from of foreignSenders()) {
      const mail = await c.cmd(`MAIL FROM:<${from}>`);
      if (!mail || mail.code < 500) accepted.push(`${from}: ${mail?.text}`);
      await c.cmd('RSET');
    }
    await c.quit();
    expect(accepted).toEqual([]);
  });

  it('refuses routing tricks in recipients (the final address of a source route is an ordinary recipient)', async () => {
    const accepted: string[] = [];
    const c = await authed();
    for (const rcpt of relayRecipients()) {
      expect((await c.cmd(`MAIL FROM:<app@${ours.domain}>`))?.code).toBe(250);
      const r = await c.cmd(`RCPT TO:<${rcpt}>`);
      // RFC 5321 appendix C: a source route must be accepted and its hops ignored; what is left
      // is victim@evil.example, which an authenticated channel may send to like any address.
      const plainAfterRoute = rcpt.startsWith('@') || rcpt === 'victim@evil.example' || rcpt === 'victim@evil.example.';
      if (r && r.code < 400 && !plainAfterRoute) accepted.push(`${rcpt}: ${r.text}`);
      await c.cmd('RSET');
    }
    await c.quit();
    expect(accepted).toEqual([]);
  });

  it('refuses a From header on another domain even when MAIL FROM is ours', async () => {
    for (const from of [`spoof@${theirs.domain}`, 'spoof@evil.example']) {
      const c = await authed();
      expect((await c.cmd(`MAIL FROM:<app@${ours.domain}>`))?.code).toBe(250);
      expect((await c.cmd('RCPT TO:<someone@example.net>'))?.code).toBe(250);
      const r = await c.data(MESSAGE(from));
      expect(r?.code, r?.text).toBeGreaterThanOrEqual(500);
      await c.quit();
    }
  });

  it('stored no message from a foreign sender and none routed through our domain', async () => {
    const d = ours.domain;
    expect((await storedSenders()).filter((f) => !f.endsWith(`@${d}`))).toEqual([]);
    expect((await storedRecipients()).filter((r) => /[%!]|"|@.*@|\[/.test(r))).toEqual([]);
  });
});

describe('over the API', () => {
  it('refuses the same routing tricks in from, to, cc and bcc', async () => {
    const tricks = [`victim%evil.example@${ours.domain}`, `evil.example!victim@${ours.domain}`, `"victim@evil.example"@${ours.domain}`, `@${ours.domain}:victim@evil.example`];
    for (const field of ['from', 'to', 'cc', 'bcc'] as const) {
      for (const email of tricks) {
        const body: Record<string, unknown> = { from: { email: `app@${ours.domain}` }, to: [{ email: 'ann@example.net' }], subject: 's', text: 't' };
        body[field] = field === 'from' ? { email } : [{ email }];
        const res = await t.api('POST', '/send/transactional', { headers: { 'x-service-channel-id': ours.channelId }, body });
        expect(res.status, `${field} ${email}: ${JSON.stringify(res.body)}`).toBe(422);
      }
    }
  });
});
