/**
 * A submitted message with more MIME parts than the parser reads (MAX_MIME_PARTS) is refused for
 * good, 550 5.6.0, whether it is read on the main thread (small) or on a worker thread: it was a
 * 451 "internal error, try again later" that the client retried for ever, with the same message.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_MIME_PARTS, PARSE_HERE_MAX_BYTES } from '../../src/submission/raw-content.js';
import { startDaemonWithDns, stopDaemonWithDns, type TestDaemon } from '../support/daemon.js';
import type { TestDns } from '../support/dns-server.js';
import { setupSender, type Sender } from '../support/sending.js';
import { SmtpWire } from '../support/smtp-wire.js';

let dns: TestDns;
let t: TestDaemon;
let s: Sender;

beforeAll(async () => {
  ({ t, dns } = await startDaemonWithDns({ 'smtp.enabled': true, 'smtp.port': 0 }));
  s = await setupSender(t, dns, { deliveryType: 'sandbox' });
});

afterAll(() => stopDaemonWithDns({ t, dns }));

/** A multipart/mixed message with `parts` parts, each of `partText`. */
function multipart(parts: number, partText: string): string {
  const head = `From: <app@${s.domain}>\r\nTo: <ann@example.net>\r\nSubject: parts\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n`;
  return `${head}${`--b\r\nContent-Type: text/plain\r\n\r\n${partText}\r\n`.repeat(parts)}--b--\r\n`;
}

async function submit(message: string): Promise<string> {
  const c = await SmtpWire.connect(t.daemon.smtp!.port);
  try {
    expect((await c.login(s.channelId, t.apiKey))?.code).toBe(235);
    expect((await c.cmd(`MAIL FROM:<app@${s.domain}>`))?.code).toBe(250);
    expect((await c.cmd('RCPT TO:<ann@example.net>'))?.code).toBe(250);
    return (await c.data(message))?.text ?? '(closed)';
  } finally {
    await c.quit();
  }
}

describe('MIME parts of SMTP submissions', () => {
  it('refuses a small message with too many parts with 550 5.6.0', async () => {
    const message = multipart(MAX_MIME_PARTS + 1, 'x');
    expect(message.length).toBeLessThanOrEqual(PARSE_HERE_MAX_BYTES);
    expect(await submit(message)).toMatch(new RegExp(`^550 5\\.6\\.0 .*more than ${MAX_MIME_PARTS} MIME parts`));
  });

  it('refuses a large message with too many parts, read on a worker thread, with 550 5.6.0', async () => {
    const message = multipart(MAX_MIME_PARTS + 1, 'y'.repeat(100));
    expect(message.length).toBeGreaterThan(PARSE_HERE_MAX_BYTES);
    expect(await submit(message)).toMatch(new RegExp(`^550 5\\.6\\.0 .*more than ${MAX_MIME_PARTS} MIME parts`));
  });

  it('takes one with fewer parts', async () => {
    expect(await submit(multipart(50, 'z'))).toMatch(/^250 2\.0\.0 /);
  });
});
