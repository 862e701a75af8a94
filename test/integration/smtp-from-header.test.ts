/**
 * From-header spoofing over SMTP: the header block is parsed strictly before the message is
 * signed with the channel's domain key. Exactly one From (RFC 5322 3.6), at most one Sender,
 * every address in them on a domain of the channel; anything else is refused at DATA with 550
 * and an enhanced code (5.7.1 for a foreign domain, 5.6.0 for a malformed header block).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemonWithDns, stopDaemonWithDns, type TestDaemon } from '../support/daemon.js';
import type { TestDns } from '../support/dns-server.js';
import { setupSender, type Sender } from '../support/sending.js';
import { SmtpWire } from '../support/smtp-wire.js';

const BANK = 'ceo@bank.example.com';

let dns: TestDns;
let t: TestDaemon;
let s: Sender;

beforeAll(async () => {
  ({ t, dns } = await startDaemonWithDns({ 'smtp.enabled': true, 'smtp.port': 0 }));
  s = await setupSender(t, dns, { deliveryType: 'sandbox' });
});

afterAll(() => stopDaemonWithDns({ t, dns }));

/** Submits a message whose header block is `headers` (OWN stands for app@<the channel's domain>). */
async function submit(headers: string[]): Promise<string> {
  const own = `app@${s.domain}`;
  const c = await SmtpWire.connect(t.daemon.smtp!.port);
  try {
    expect((await c.login(s.channelId, t.apiKey))?.code).toBe(235);
    expect((await c.cmd(`MAIL FROM:<${own}>`))?.code).toBe(250);
    expect((await c.cmd('RCPT TO:<ann@example.net>'))?.code).toBe(250);
    const head = headers.map((h) => h.replace(/OWN2/g, `news@${s.domain}`).replace(/OWN/g, own)).join('\r\n');
    const r = await c.data(`${head}\r\nTo: <ann@example.net>\r\nSubject: spoof test\r\n\r\nbody\r\n`);
    return r?.text ?? '(closed)';
  } finally {
    await c.quit();
  }
}

describe('From header checks on SMTP submission', () => {
  it.each([
    ['a second address on a foreign domain', ['From: OWN, ' + BANK, 'Sender: OWN'], /^550 5\.7\.1 From ceo@bank\.example\.com: /],
    ['a folded second address on a foreign domain', ['From: OWN,', ` ${BANK}`, 'Sender: OWN'], /^550 5\.7\.1 From ceo@bank\.example\.com: /],
    ['a Sender on a foreign domain', ['From: OWN', `Sender: ${BANK}`], /^550 5\.7\.1 Sender ceo@bank\.example\.com: /],
    ['two From headers', ['From: OWN', `From: ${BANK}`], /^550 5\.6\.0 The message must have exactly one From header .* it has 2/],
    ['a second From header in capitals', ['From: OWN', `FROM: ${BANK}`], /^550 5\.6\.0 The message must have exactly one From header .* it has 2/],
    // Delivery sends a bare CR as CRLF (delivery/smtp-data.ts): the receiver sees a second field.
    ['a From header after a bare CR', ['From: OWN', `Comments: hello\rFrom: ${BANK}`], /^550 5\.6\.0 The message must have exactly one From header .* it has 2/],
    ['a From header after a bare LF', ['From: OWN', `Comments: hello\nFrom: ${BANK}`], /^550 5\.6\.0 The message must have exactly one From header .* it has 2/],
    ['the obsolete "From :" form', [`From : ${BANK}`], /^550 5\.6\.0 From header: white space before the colon/],
    ['group syntax', [`From: Team: OWN, ${BANK};`], /^550 5\.6\.0 From header uses group syntax/],
    ['two addresses without a comma', [`From: OWN ${BANK}`, 'Sender: OWN'], /^550 5\.6\.0 From header /],
    ['two angle addresses', [`From: <OWN> <${BANK}>`], /^550 5\.6\.0 From header /],
    ['an address in an unquoted display name', [`From: OWN <${BANK}>`], /^550 5\.6\.0 From header has a display name/],
    ['several own addresses without a Sender', ['From: OWN, OWN2'], /^550 5\.6\.0 A From header with more than one address needs a Sender/],
    ['no From header', ['Reply-To: OWN'], /^550 5\.6\.0 The message must have exactly one From header .* it has 0/],
  ])('refuses %s', async (_name, headers, reply) => {
    expect(await submit(headers)).toMatch(reply);
  });

  it.each([
    ['a quoted display name that looks like an address', [`From: "${BANK}" <OWN>`]],
    ['several own addresses with a Sender', ['From: App <OWN>, News (the list) <OWN2>', 'Sender: OWN']],
    ['a display name with an unquoted dot and an encoded word', ['From: John Q. =?utf-8?q?Publ=C3=ADc?= <OWN>']],
  ])('accepts %s', async (_name, headers) => {
    const r = await submit(headers);
    expect(r).toMatch(/^250 2\.0\.0 Ok: queued as /);
    const id = /queued as ([0-9a-f-]{36})/.exec(r)![1];
    expect((await t.daemon.store.messages.get(id))?.from.email).toBe(`app@${s.domain}`);
  });

  it('records the decoded display name of the first From address', async () => {
    const r = await submit(['From: John Q. =?utf-8?q?Publ=C3=ADc?= <OWN>']);
    const id = /queued as ([0-9a-f-]{36})/.exec(r)![1];
    expect((await t.daemon.store.messages.get(id))?.from).toEqual({ email: `app@${s.domain}`, name: 'John Q. Publíc' });
  });
});
