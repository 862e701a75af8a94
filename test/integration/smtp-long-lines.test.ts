/**
 * Lines over 998 octets (RFC 5322 2.1.1) through the whole path: SMTP submission → queue →
 * delivery to a strict MX on 127.0.20.7 that answers "500 Line too long" to any longer line.
 * Submission re-encodes such parts (quoted-printable for text, base64 otherwise) before signing,
 * so the message is delivered, DKIM-valid, with the same content; what cannot be re-encoded is
 * refused at DATA with 550 5.6.0.
 */
import { simpleParser } from 'mailparser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestDaemon } from '../support/daemon.js';
import { startDeliveryRig, type DeliveryRig } from '../support/delivery-rig.js';
import type { TestDns } from '../support/dns-server.js';
import type { MxServer } from '../support/mx-server.js';
import type { Sender } from '../support/sending.js';
import { verifyDkim } from '../support/signing.js';
import { SmtpWire } from '../support/smtp-wire.js';
import { waitFor } from '../support/wait.js';

const RCPT_DOMAIN = 'strict-mail.net';
const LONG = 'Lorem ipsum dolor sit amet, é ü '.repeat(200); // about 6,600 octets, UTF-8

let dns: TestDns;
let mx: MxServer;
let t: TestDaemon;
let s: Sender;
let rig: DeliveryRig | undefined;

beforeAll(async () => {
  rig = await startDeliveryRig({ mx: { address: '127.0.20.7', maxLineLength: 998 }, domains: [RCPT_DOMAIN], daemon: { 'smtp.enabled': true, 'smtp.port': 0 } });
  ({ dns, mx, t, s } = rig);
});

afterAll(() => rig?.stop());

async function submit(to: string, message: string): Promise<string> {
  const c = await SmtpWire.connect(t.daemon.smtp!.port);
  try {
    expect((await c.login(s.channelId, t.apiKey))?.code).toBe(235);
    expect((await c.cmd(`MAIL FROM:<app@${s.domain}>`))?.code).toBe(250);
    expect((await c.cmd(`RCPT TO:<${to}>`))?.code).toBe(250);
    return (await c.data(message))?.text ?? '(closed)';
  } finally {
    await c.quit();
  }
}

/** What the strict MX received for `to`, once the message was delivered. */
async function received(to: string): Promise<Buffer> {
  return (await waitFor(() => mx.received.find((m) => m.to.includes(to)), { what: `a delivery to ${to}`, timeout: 15_000 })).raw;
}

function longestLine(raw: Buffer): number {
  return raw
    .toString('latin1')
    .split('\n')
    .reduce((max, l) => Math.max(max, l.replace(/\r$/, '').length), 0);
}

async function dkimResults(raw: Buffer): Promise<string[]> {
  const r = await verifyDkim(dns, raw);
  return r.results.map((x: { status: { result: string } }) => x.status.result);
}

const head = (to: string, extra: string[] = []) => [`From: App <app@${s.domain}>`, `To: <${to}>`, 'Subject: long lines', ...extra].join('\r\n');

describe('lines over 998 octets', () => {
  it('re-encodes a plain text message as quoted-printable, so the strict MX takes it, DKIM-valid and unchanged in content', async () => {
    const to = `plain@${RCPT_DOMAIN}`;
    const r = await submit(to, `${head(to, ['Content-Type: text/plain; charset=utf-8', 'Content-Transfer-Encoding: 8bit'])}\r\n\r\nshort line\r\n${LONG}\r\nend\r\n`);
    expect(r).toMatch(/^250 /);
    const raw = await received(to);
    expect(longestLine(raw)).toBeLessThanOrEqual(998);
    const parsed = await simpleParser(raw);
    expect(parsed.headers.get('content-transfer-encoding')).toBe('quoted-printable');
    expect(parsed.headers.get('mime-version')).toBe('1.0');
    expect(parsed.text).toBe(`short line\n${LONG}\nend\n`);
    expect(await dkimResults(raw)).toEqual(['pass']);
  });

  it('re-encodes only the parts of a multipart message that need it: HTML as quoted-printable, a binary part as base64', async () => {
    const to = `multi@${RCPT_DOMAIN}`;
    const html = `<p>${LONG}</p>`;
    const blob = 'b'.repeat(3000);
    const message = [
      head(to, ['MIME-Version: 1.0', 'Content-Type: multipart/mixed; boundary="outer"']),
      '',
      'preamble',
      '--outer',
      'Content-Type: multipart/alternative; boundary="inner"',
      '',
      '--inner',
      'Content-Type: text/plain; charset=utf-8',
      '',
      'short text part',
      '--inner',
      'Content-Type: text/html; charset=utf-8',
      'Content-Transfer-Encoding: 8bit',
      '',
      html,
      '--inner--',
      '--outer',
      'Content-Type: application/octet-stream; name="blob.bin"',
      'Content-Disposition: attachment; filename="blob.bin"',
      '',
      blob,
      '--outer--',
      '',
    ].join('\r\n');
    expect(await submit(to, message)).toMatch(/^250 /);
    const raw = await received(to);
    expect(longestLine(raw)).toBeLessThanOrEqual(998);
    expect(raw.toString('latin1')).toContain('--inner\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nshort text part\r\n--inner');
    const parsed = await simpleParser(raw);
    expect(parsed.html).toBe(html);
    expect(parsed.text?.trim()).toBe('short text part');
    expect(parsed.attachments.map((a) => [a.filename, a.content.toString('latin1')])).toEqual([['blob.bin', blob]]);
    expect(await dkimResults(raw)).toEqual(['pass']);
  });

  it.each([
    ['a header line', (to: string) => `${head(to, [`X-Long: ${'h'.repeat(1200)}`])}\r\n\r\nbody\r\n`, /^550 5\.6\.0 Line length: the header X-Long has a line longer than 998/],
    ['a base64 part', (to: string) => `${head(to, ['Content-Type: text/plain', 'Content-Transfer-Encoding: base64'])}\r\n\r\n${'QUFB'.repeat(300)}\r\n`, /^550 5\.6\.0 Line length: a text\/plain part encoded as base64/],
    ['a message/rfc822 part', (to: string) => `${head(to, ['Content-Type: message/rfc822'])}\r\n\r\nSubject: inner\r\n\r\n${LONG}\r\n`, /^550 5\.6\.0 Line length: a message\/rfc822 part/],
  ])('refuses a line over 998 octets in %s, which cannot be re-encoded', async (_name, build, reply) => {
    const to = `refused@${RCPT_DOMAIN}`;
    expect(await submit(to, build(to))).toMatch(reply);
    expect((await t.daemon.store.suppressions.is(s.channelId, 'transactional', to))).toBe(false);
  });
});
