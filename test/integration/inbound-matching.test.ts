/**
 * Matching reports to messages by every key they carry (inbound/report-match.ts), over real
 * SMTP: mail submitted over SMTP keeps the client's own Message-ID, and a feedback loop sends its
 * ARF report (RFC 5965) to a fixed address of the bounce host without Original-Mail-From. Reports
 * that match nothing are accepted but logged and counted (postrider_inbound_reports_unmatched_total).
 */
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { InboundReception } from '../../src/inbound/reception.js';
import type { InboundProcessor } from '../../src/inbound/processor.js';
import { startDaemonWithDns, stopDaemonWithDns, type TestDaemon } from '../support/daemon.js';
import type { TestDns } from '../support/dns-server.js';
import { arf, dsn } from '../support/reports.js';
import { setupSender, type Sender } from '../support/sending.js';
import { sendToInbound } from '../support/inbound.js';

let dns: TestDns;
let t: TestDaemon;
let s: Sender;

const bounceHost = () => `bounces.${s.domain}`;
const fbl = () => `fbl@${bounceHost()}`;

beforeAll(async () => {
  ({ t, dns } = await startDaemonWithDns({ 'inbound.enabled': true, 'inbound.port': 0, 'smtp.enabled': true, 'smtp.port': 0 }));
  s = await setupSender(t, dns);
});

afterAll(() => stopDaemonWithDns({ t, dns }));

/** Submits over SMTP (AUTH, STARTTLS) with the client's own Message-ID; returns our message id. */
async function submit(to: string, clientMessageId: string): Promise<string> {
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port: t.daemon.smtp!.port, secure: false, requireTLS: true, tls: { rejectUnauthorized: false }, auth: { user: s.channelId, pass: t.apiKey } });
  try {
    const info = await transport.sendMail({ from: `app@${s.domain}`, to, subject: 'Receipt', text: 'Thanks', messageId: clientMessageId });
    return /queued as ([0-9a-f-]{36})/.exec(info.response)![1];
  } finally {
    transport.close();
  }
}

/** Raw bytes to the inbound listener over SMTP; resolves with its reply, rejects with a refusal. */
const deliver = (to: string, raw: string): Promise<string> => sendToInbound(t.daemon.inbound!.port, to, raw);

const complaints = async (messageId: string) => (await t.api('GET', `/activity/events?messageId=${messageId}&eventTypes=complained`)).body.results as any[];

async function unmatchedCount(kind: 'arf' | 'dsn'): Promise<number> {
  const text = await t.daemon.metrics.render();
  const m = new RegExp(`^postrider_inbound_reports_unmatched_total\\{kind="${kind}"\\} (\\d+)`, 'm').exec(text);
  return m ? Number(m[1]) : 0;
}

/** The processor's logger (the daemon builds it; its warn is where unmatched reports go). */
function inboundLogger() {
  const reception = t.daemon.inbound!['deps'].reception as InboundReception;
  const processor = reception['deps'].bounces as InboundProcessor;
  return processor['deps'].logger!;
}

describe('matching inbound reports', () => {
  it('records a complaint about SMTP mail with the client Message-ID, reported to a fixed address without Original-Mail-From', async () => {
    const clientId = `<order-1001.${Date.now()}@shop.example>`;
    const id = await submit('ivy@example.net', clientId);
    expect((await t.daemon.store.messages.get(id))!.messageIdHeader).toBe(clientId);
    // As a feedback loop forwards it: the receiver's Return-Path (our VERP sender) on the original.
    const raw = arf({ to: fbl(), messageIdHeader: clientId, originalTo: 'ivy@example.net', returnPath: `bounces+${id}@${bounceHost()}` });
    expect(await deliver(fbl(), raw)).toMatch(/^250/);
    expect((await complaints(id)).map((e) => e.recipients)).toEqual([['ivy@example.net']]);
    expect(await t.daemon.store.suppressions.get(s.channelId, 'transactional', 'ivy@example.net')).toMatchObject({ reason: 'complaint' });
  });

  it('matches by the client Message-ID alone (headers-only original without Return-Path)', async () => {
    const clientId = `<order-1002.${Date.now()}@shop.example>`;
    const id = await submit('jon@example.net', clientId);
    await deliver(fbl(), arf({ to: fbl(), messageIdHeader: clientId, originalTo: 'jon@example.net' }));
    expect((await complaints(id)).map((e) => e.recipients)).toEqual([['jon@example.net']]);
  });

  it('counts and logs an ARF report that matches no message', async () => {
    const before = await unmatchedCount('arf');
    const warn = vi.spyOn(inboundLogger(), 'warn');
    try {
      const reply = await deliver(fbl(), arf({ to: fbl(), messageIdHeader: '<unknown-42@elsewhere.example>', originalTo: 'kim@example.net' }));
      expect(reply).toMatch(/^250/);
      expect(await unmatchedCount('arf')).toBe(before + 1);
      expect(warn).toHaveBeenCalledWith(
        expect.objectContaining({ event: 'inbound_report_unmatched', kind: 'arf', reason: 'no-key-matched', messageIdHeader: '<unknown-42@elsewhere.example>', rcptTo: [fbl()] }),
        'inbound report matched no message',
      );
    } finally {
      warn.mockRestore();
    }
  });

  it('counts a failed DSN that matches no message', async () => {
    const before = await unmatchedCount('dsn');
    await deliver(fbl(), dsn({ to: fbl(), recipient: 'lee@example.net', messageIdHeader: '<unknown-43@elsewhere.example>', status: '5.1.1', diagnostic: '550 5.1.1 User unknown' }));
    expect(await unmatchedCount('dsn')).toBe(before + 1);
  });
});
