/**
 * The inbound listener over real SMTP: RFC 3464 DSNs become bounced events (hard ones
 * suppressed), RFC 5965 feedback reports become complained events and suppressions, the
 * List-Unsubscribe mailto unsubscribes, and every other recipient is refused at RCPT (no relay).
 */
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MessageRecord } from '../../src/domain/types.js';
import { signedBody } from '../support/signing.js';
import { startDaemonWithDns, stopDaemonWithDns, type TestDaemon } from '../support/daemon.js';
import type { TestDns } from '../support/dns-server.js';
import { arf, dsn } from '../support/reports.js';
import { setupSender, type Sender } from '../support/sending.js';

let dns: TestDns;
let t: TestDaemon;
let s: Sender;

const bounceHost = () => `bounces.${s.domain}`;
const verp = (m: MessageRecord) => `bounces+${m.id}@${bounceHost()}`;

/** Sends raw bytes over SMTP to the inbound listener; resolves with the server's reply or rejects with it. */
async function deliver(o: { from?: string; to: string[]; raw: string }): Promise<string> {
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port: t.daemon.inbound!.port, secure: false, ignoreTLS: true, tls: { rejectUnauthorized: false } });
  try {
    const info = await transport.sendMail({ envelope: { from: o.from ?? '', to: o.to }, raw: o.raw });
    return info.response;
  } finally {
    transport.close();
  }
}

async function sendTransactional(to: string[]): Promise<MessageRecord> {
  const res = await t.api('POST', '/send/transactional', {
    headers: { 'x-service-channel-id': s.channelId },
    body: { from: { email: `shop@${s.domain}` }, to: to.map((email) => ({ email })), subject: 'Order', text: 'Thanks' },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return (await t.daemon.store.messages.get(res.body.messageId))!;
}

async function sendBroadcast(to: string): Promise<MessageRecord> {
  const res = await t.api('POST', '/send/broadcast', {
    headers: { 'x-service-channel-id': s.channelId },
    body: { from: { email: `news@${s.domain}` }, template: { subject: 'News', text: 'Hi' }, messages: [{ to: [{ email: to }] }] },
  });
  expect(res.status).toBe(200);
  await t.daemon.submission.expander.drain();
  const m = (await t.daemon.store.messages.all()).find((x) => x.broadcastId === res.body.broadcastId)!;
  // Broadcast entries are composed after their commit (submission/finishing.ts): tests read the body.
  await signedBody(t.daemon.store, m.id);
  return (await t.daemon.store.messages.get(m.id))!;
}

const events = async (messageId: string, types: string) =>
  (await t.api('GET', `/activity/events?messageId=${messageId}&eventTypes=${types}`)).body.results as any[];
const totals = async () => (await t.api('GET', `/statistics/totals?channelId=${s.channelId}`)).body;

beforeAll(async () => {
  ({ t, dns } = await startDaemonWithDns({
    'inbound.enabled': true,
    'inbound.port': 0,
    // 100 reports at once from this one address below: more than the per-address cap's default.
    'inbound.maxConnectionsPerAddress': 200,
    publicUrl: 'https://links.postrider-test.net',
  }));
  s = await setupSender(t, dns);
});

afterAll(() => stopDaemonWithDns({ t, dns }));

describe('inbound listener', () => {
  it('turns a DSN with a 5.1.1 failure into a hard bounced event, a suppression and the bounced counter', async () => {
    const m = await sendTransactional(['ann@example.net']);
    const reply = await deliver({ to: [verp(m)], raw: dsn({ to: verp(m), recipient: 'ann@example.net', messageIdHeader: m.messageIdHeader, status: '5.1.1', diagnostic: '550 5.1.1 <ann@example.net>... User unknown' }) });
    expect(reply).toMatch(/^250/);
    const bounced = await events(m.id, 'bounced');
    expect(bounced).toHaveLength(1);
    expect(bounced[0]).toMatchObject({
      recipients: ['ann@example.net'],
      mailType: 'transactional',
      details: { bounceType: 'hard', category: 'unknown_user', enhancedCode: '5.1.1', smtpCode: 550, reportingMta: 'mx.example.net', async: true },
    });
    expect(await t.daemon.store.suppressions.get(s.channelId, 'transactional', 'ann@example.net')).toMatchObject({ reason: 'bounce' });
    expect((await totals()).transactional.bounced).toBe(1);
  });

  it('records a failed DSN with a temporary status as a soft bounce without suppression, and ignores "delayed"', async () => {
    const m = await sendTransactional(['bob@example.net']);
    await deliver({ to: [verp(m)], raw: dsn({ to: verp(m), recipient: 'bob@example.net', messageIdHeader: m.messageIdHeader, status: '4.4.7', diagnostic: '426 connection timed out', action: 'delayed' }) });
    expect(await events(m.id, 'bounced')).toHaveLength(0);
    await deliver({ to: [verp(m)], raw: dsn({ to: verp(m), recipient: 'bob@example.net', messageIdHeader: m.messageIdHeader, status: '4.0.0', diagnostic: '426 connection timed out' }) });
    const bounced = await events(m.id, 'bounced');
    expect(bounced.map((e) => e.details.bounceType)).toEqual(['soft']);
    expect(await t.daemon.store.suppressions.get(s.channelId, 'transactional', 'bob@example.net')).toBeUndefined();
  });

  it('ignores a DSN naming an address the message was not sent to', async () => {
    const m = await sendTransactional(['cat@example.net']);
    await deliver({ to: [verp(m)], raw: dsn({ to: verp(m), recipient: 'victim@example.org', messageIdHeader: m.messageIdHeader, status: '5.1.1', diagnostic: '550 5.1.1 User unknown' }) });
    expect(await events(m.id, 'bounced')).toHaveLength(0);
    expect(await t.daemon.store.suppressions.get(s.channelId, 'transactional', 'victim@example.org')).toBeUndefined();
  });

  it('records one bounced and one complained event for a recipient however often reports about it come', async () => {
    const m = await sendTransactional(['hal@example.net']);
    const soft = dsn({ to: verp(m), recipient: 'hal@example.net', messageIdHeader: m.messageIdHeader, status: '4.2.2', diagnostic: '452 4.2.2 Mailbox full' });
    const report = arf({ to: verp(m), originalMailFrom: verp(m), recipient: 'hal@example.net', messageIdHeader: m.messageIdHeader, originalTo: 'hal@example.net' });
    const before = (await totals()).transactional;
    // 50 of each, interleaved and at once: each report's write looks for an earlier event itself.
    const replies = await Promise.all(Array.from({ length: 100 }, (_, i) => deliver({ to: [verp(m)], raw: i % 2 === 0 ? soft : report })));
    expect(replies.every((r) => /^250/.test(r))).toBe(true);
    expect((await events(m.id, 'bounced')).map((e) => e.recipients)).toEqual([['hal@example.net']]);
    expect((await events(m.id, 'complained')).map((e) => e.recipients)).toEqual([['hal@example.net']]);
    expect((await totals()).transactional).toMatchObject({ bounced: before.bounced + 1, complained: before.complained + 1 });
  });

  it('turns an ARF abuse report into a complained event, a suppression and the complained counter', async () => {
    const m = await sendBroadcast('dee@example.net');
    const reply = await deliver({ to: [verp(m)], raw: arf({ to: verp(m), originalMailFrom: verp(m), recipient: 'dee@example.net', messageIdHeader: m.messageIdHeader, originalTo: 'dee@example.net' }) });
    expect(reply).toMatch(/^250/);
    const complained = await events(m.id, 'complained');
    expect(complained).toHaveLength(1);
    expect(complained[0]).toMatchObject({ recipients: ['dee@example.net'], mailType: 'broadcast', details: { feedbackType: 'abuse', userAgent: 'SomeGenerator/1.0', sourceIp: '192.0.2.1' } });
    expect(await t.daemon.store.suppressions.get(s.channelId, 'broadcast', 'dee@example.net')).toMatchObject({ reason: 'complaint' });
    expect((await totals()).broadcast.complained).toBe(1);
  });

  it('matches a feedback report sent to another address of the bounce host by the original Message-ID', async () => {
    const m = await sendBroadcast('eve@example.net');
    await deliver({ to: [`fbl@${bounceHost()}`], raw: arf({ to: `fbl@${bounceHost()}`, messageIdHeader: m.messageIdHeader, originalTo: 'eve@example.net' }) });
    expect((await events(m.id, 'complained')).map((e) => e.recipients)).toEqual([['eve@example.net']]);
    expect(await t.daemon.store.suppressions.get(s.channelId, 'broadcast', 'eve@example.net')).toMatchObject({ reason: 'complaint' });
  });

  it('unsubscribes through the List-Unsubscribe mailto address', async () => {
    const m = await sendBroadcast('fay@example.net');
    const raw = (await t.daemon.store.messages.body(m.id))!.toString();
    const header = /^List-Unsubscribe:[ \t]*(.*(?:\r\n[ \t].*)*)/im.exec(raw)![1].replace(/\r\n[ \t]+/g, ' ');
    const mailto = /<mailto:([^>?]+)/.exec(header)![1];
    expect(mailto).toMatch(new RegExp(`^unsub-[0-9a-f]{32}-[0-9a-f]{16}@${bounceHost().replace(/\./g, '\\.')}$`));
    await deliver({ from: 'fay@example.net', to: [mailto], raw: 'From: fay@example.net\r\nTo: ' + mailto + '\r\nSubject: unsubscribe\r\n\r\n' });
    expect((await events(m.id, 'unsubscribed')).map((e) => e.recipients)).toEqual([['fay@example.net']]);
    expect(await t.daemon.store.suppressions.get(s.channelId, 'broadcast', 'fay@example.net')).toMatchObject({ reason: 'unsubscribe' });
  });

  it('refuses relaying: foreign domains, other hosts of our domains and forged unsubscribe addresses get 550 5.1.1 at RCPT', async () => {
    const m = await sendTransactional(['gil@example.net']);
    for (const rcpt of ['someone@example.org', `postmaster@${s.domain}`, `bounces+${m.id}@bounces.other-domain.com`, `unsub-${'0'.repeat(32)}-${'0'.repeat(16)}@example.org`, 'x@bounces.unregistered.com']) {
      await expect(deliver({ to: [rcpt], raw: 'Subject: x\r\n\r\nrelay?\r\n' }), rcpt).rejects.toMatchObject({ responseCode: 550, response: expect.stringContaining('5.1.1') });
    }
  });
});
