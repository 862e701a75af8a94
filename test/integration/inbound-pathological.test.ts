/**
 * Issue 29: reports whose fields are built to make a backtracking parser take minutes (a
 * Final-Recipient of 4,000+ characters "a@a@…a@ x", the same in an ARF report, a plain mail with a
 * 96 KB Content-Type) sent to the real inbound listener of a real daemon. The daemon answers the
 * SMTP transaction, /health answers right after, and the oversized fields are simply not read:
 * nobody is bounced or suppressed for them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MessageRecord } from '../../src/domain/types.js';
import { startDaemonWithDns, stopDaemonWithDns, type TestDaemon } from '../support/daemon.js';
import type { TestDns } from '../support/dns-server.js';
import { arf, dsn } from '../support/reports.js';
import { setupSender, type Sender } from '../support/sending.js';
import { sendToInbound } from '../support/inbound.js';

let dns: TestDns;
let t: TestDaemon;
let s: Sender;

/** "a@a@…a@ x": 4,002 characters of what the old address expression backtracked on. */
const AT_RUN = `${'a@'.repeat(2_000)} x`;

/** Raw bytes to the inbound listener over SMTP; resolves with its reply, rejects with a refusal. */
const deliver = (to: string, raw: string): Promise<string> => sendToInbound(t.daemon.inbound!.port, to, raw);

async function sendTransactional(to: string): Promise<MessageRecord> {
  const res = await t.api('POST', '/send/transactional', {
    headers: { 'x-service-channel-id': s.channelId },
    body: { from: { email: `shop@${s.domain}` }, to: [{ email: to }], subject: 'Order', text: 'Thanks' },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return (await t.daemon.store.messages.get(res.body.messageId))!;
}

const events = async (messageId: string, types: string) =>
  (await t.api('GET', `/activity/events?messageId=${messageId}&eventTypes=${types}`)).body.results as Array<{ recipient?: string; email?: string }>;

/** The SMTP reply, then /health at once: both must come. */
async function deliverAndCheckHealth(raw: string): Promise<void> {
  const reply = await deliver(`fbl@bounces.${s.domain}`, raw);
  expect(reply).toMatch(/^250 /);
  expect((await t.api('GET', '/health')).status).toBe(200);
}

beforeAll(async () => {
  ({ t, dns } = await startDaemonWithDns({ 'inbound.enabled': true, 'inbound.port': 0 }));
  s = await setupSender(t, dns);
});

afterAll(() => stopDaemonWithDns({ t, dns }));

describe('pathological reports at the inbound listener', () => {
  it('answers a DSN whose recipient fields are "a@a@…a@ x" and bounces nobody for them', async () => {
    const m = await sendTransactional('ann@example.net');
    const raw = dsn({ to: `fbl@bounces.${s.domain}`, recipient: 'ann@example.net', messageIdHeader: m.messageIdHeader, status: '5.1.1', diagnostic: '550 5.1.1 User unknown' })
      .replace(/^Final-Recipient:.*$/m, `Final-Recipient: rfc822; ${AT_RUN}`)
      .replace(/^Original-Recipient:.*$/m, `Original-Recipient: rfc822; ${AT_RUN}`);
    await deliverAndCheckHealth(raw);
    expect(await events(m.id, 'bounced')).toEqual([]);
    expect((await t.daemon.store.suppressions.list(s.channelId)).map((x) => x.email)).toEqual([]);
  });

  it('answers an ARF report whose Original-Rcpt-To and embedded To are "a@a@…a@ x" and suppresses none of it', async () => {
    const m = await sendTransactional('bob@example.net');
    const raw = arf({ to: `fbl@bounces.${s.domain}`, recipient: 'x@y.z', messageIdHeader: m.messageIdHeader, originalTo: 'x@y.z' })
      .replace(/^Original-Rcpt-To:.*$/m, `Original-Rcpt-To: ${AT_RUN}`)
      .replace(/^To: <x@y\.z>$/m, `To: ${AT_RUN}`);
    await deliverAndCheckHealth(raw);
    const suppressed = (await t.daemon.store.suppressions.list(s.channelId)).map((x) => x.email);
    expect(suppressed.every((e) => m.recipients.includes(e))).toBe(true);
  });

  it('answers a plain mail with a 96 KB Content-Type and takes it as no report', async () => {
    const m = await sendTransactional('cid@example.net');
    await deliverAndCheckHealth(`From: <x@y.z>\r\nTo: <fbl@bounces.${s.domain}>\r\nSubject: hi\r\nContent-Type: text/plain; ${'a'.repeat(96_000)}\r\n\r\nhello\r\n`);
    expect(await events(m.id, 'bounced,complained')).toEqual([]);
  });
});
