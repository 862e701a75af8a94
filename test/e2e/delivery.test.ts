/**
 * The whole path through one daemon: HTTP or SMTP submission → LMDB queue → dispatcher → MX
 * lookup in the test DNS server → an smtp-server MX on 127.0.20.x. The DKIM signature of what
 * the MX received is checked with mailauth against the records the domain API told us to
 * publish. Nothing here touches real DNS or a real MX.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestDaemon } from '../support/daemon.js';
import { startDeliveryRig, type DeliveryRig } from '../support/delivery-rig.js';
import type { TestDns } from '../support/dns-server.js';
import type { MxServer } from '../support/mx-server.js';
import type { Sender } from '../support/sending.js';
import { verifyDkim } from '../support/signing.js';
import { waitFor } from '../support/wait.js';

const run = promisify(execFile);
const RCPT_DOMAIN = 'inbox-mail.net';

let dns: TestDns;
let mx: MxServer;
let t: TestDaemon;
let s: Sender;
let rig: DeliveryRig | undefined;

beforeAll(async () => {
  rig = await startDeliveryRig({
    mx: { address: '127.0.20.2' },
    domains: [RCPT_DOMAIN],
    // Short enough that a deferral is retried within the test.
    daemon: { 'smtp.enabled': true, 'smtp.port': 0, 'delivery.retrySchedule': '1s*' },
  });
  ({ dns, mx, t, s } = rig);
});

afterAll(() => rig?.stop());

async function eventsOf(messageId: string, until: (types: string[]) => boolean): Promise<Array<{ eventType: string; mailSource: string; details?: Record<string, unknown> }>> {
  return waitFor(
    async () => {
      const res = await t.api('GET', `/activity/events?messageId=${messageId}`);
      expect(res.status).toBe(200);
      const types = res.body.results.map((e: { eventType: string }) => e.eventType);
      if (!until(types)) throw new Error(`events are still ${types.join(',')}`);
      return res.body.results;
    },
    { what: `the events of ${messageId}`, timeout: 15_000 },
  );
}

async function send(to: string, extra: Record<string, unknown> = {}): Promise<string> {
  const res = await t.api('POST', '/send/transactional', {
    headers: { 'x-service-channel-id': s.channelId },
    body: { from: { email: `app@${s.domain}`, name: 'App' }, to: [{ email: to }], subject: 'Hello', text: 'Hi there', ...extra },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.messageId;
}

describe('delivery through the daemon', () => {
  it('delivers an API send to the recipient MX, DKIM-valid over STARTTLS, and records delivered', async () => {
    const id = await send(`alice@${RCPT_DOMAIN}`);
    const events = await eventsOf(id, (e) => e.includes('delivered'));
    const delivered = events.find((e) => e.eventType === 'delivered')!;
    expect(delivered.details).toMatchObject({ smtpCode: 250, tls: true, attempt: 1 });

    const got = mx.received.find((m) => m.to.includes(`alice@${RCPT_DOMAIN}`))!;
    expect(got.secure).toBe(true);
    // MAIL FROM is the domain's return path (bounce) address, not the From header: the
    // recipient's own (bounces+<message id>-<mac>, domain/verp.ts).
    const host = s.dnsRecords.returnPath.find((r) => r.type === 'mx')!.host;
    expect(got.from).toMatch(new RegExp(`^bounces\\+${id}-[0-9a-f]{16}@${host.replace(/\./g, '\\.')}$`));
    const result = await verifyDkim(dns, got.raw);
    expect(result.results.map((r: { status: { result: string } }) => r.status.result), JSON.stringify(result.results[0]?.status)).toEqual(['pass']);
    expect(result.results[0].signingDomain).toBe(s.domain);

    const details = await t.api('GET', `/activity/messages/${id}`);
    expect(details.status).toBe(200);
    expect(details.body.status).toBe('sent');
  });

  it('bounces a 550 recipient, suppresses it and refuses the next send to it', async () => {
    mx.scriptRcpt(`gone@${RCPT_DOMAIN}`, { code: 550, message: '5.1.1 User unknown' });
    const id = await send(`gone@${RCPT_DOMAIN}`);
    const events = await eventsOf(id, (e) => e.includes('bounced'));
    expect(events.find((e) => e.eventType === 'bounced')!.details).toMatchObject({ bounceType: 'hard', smtpCode: 550, enhancedCode: '5.1.1' });
    expect(await t.daemon.store.suppressions.is(s.channelId, 'transactional', `gone@${RCPT_DOMAIN}`)).toBe(true);
    const again = await t.api('POST', '/send/transactional', {
      headers: { 'x-service-channel-id': s.channelId },
      body: { from: { email: `app@${s.domain}` }, to: [{ email: `gone@${RCPT_DOMAIN}` }], subject: 'x', text: 'x' },
    });
    expect(again.status).toBe(422);
    expect(again.body.code).toBe('recipients_suppressed');
  });

  it('retries a 4xx and delivers on the next attempt, keeping the deferral in the history', async () => {
    mx.scriptRcpt(`grey@${RCPT_DOMAIN}`, { code: 451, message: '4.7.1 Greylisted, try again later' });
    const id = await send(`grey@${RCPT_DOMAIN}`);
    const events = await eventsOf(id, (e) => e.includes('delivered'));
    expect(events.find((e) => e.eventType === 'delivered')!.details).toMatchObject({ attempt: 2 });
    const details = await t.api('GET', `/activity/messages/${id}`);
    expect(JSON.stringify(details.body)).toContain('Greylisted');
  });

  it('delivers a swaks submission end to end and shows it with mailSource smtp', async () => {
    const { stdout } = await run('swaks', [
      '--server', '127.0.0.1', '--port', String(t.daemon.smtp!.port), '--tls', '--auth', 'PLAIN',
      '--auth-user', s.channelId, '--auth-password', t.apiKey, '--from', `app@${s.domain}`, '--to', `swaks@${RCPT_DOMAIN}`,
      '--header', 'Subject: via swaks', '--body', 'hello from swaks',
    ]);
    const id = /250 [^\n]*?([0-9a-f-]{36})/.exec(stdout)?.[1];
    expect(id, stdout).toBeDefined();
    const events = await eventsOf(id!, (e) => e.includes('delivered'));
    expect(events.every((e) => e.mailSource === 'smtp')).toBe(true);
    const got = mx.received.find((m) => m.to.includes(`swaks@${RCPT_DOMAIN}`))!;
    expect(got.raw.toString()).toContain('hello from swaks');
    const result = await verifyDkim(dns, got.raw);
    expect(result.results.map((r: { status: { result: string } }) => r.status.result)).toEqual(['pass']);
  });

  it('refuses an unauthenticated relay attempt with 530', async () => {
    const tr = nodemailer.createTransport({ host: '127.0.0.1', port: t.daemon.smtp!.port, secure: false, ignoreTLS: true });
    const err = await tr.sendMail({ from: 'spam@elsewhere.example', to: `victim@${RCPT_DOMAIN}`, subject: 'x', text: 'x' }).catch((e) => e);
    expect(err.responseCode).toBe(530);
    expect(mx.received.some((m) => m.to.includes(`victim@${RCPT_DOMAIN}`))).toBe(false);
  });

  it('counts accepted, delivered and bounced messages and DKIM sign time in /metrics', async () => {
    const res = await fetch(`${t.url}/metrics`);
    const text = await res.text();
    const value = (name: string) => Number(new RegExp(`^${name}\\{delivery_type="live"\\} (\\d+)`, 'm').exec(text)?.[1] ?? 0);
    expect(value('postrider_messages_accepted_total')).toBeGreaterThanOrEqual(4);
    expect(value('postrider_messages_delivered_total')).toBeGreaterThanOrEqual(3);
    expect(value('postrider_messages_bounced_total')).toBeGreaterThanOrEqual(1);
    expect(value('postrider_messages_deferred_total')).toBeGreaterThanOrEqual(1);
    expect(Number(/^postrider_dkim_sign_duration_seconds_count (\d+)/m.exec(text)?.[1] ?? 0)).toBeGreaterThanOrEqual(4);
    // Every attempt that reached an MX ran on a session, new or from the connection cache.
    const sessions = (reused: string) => Number(new RegExp(`^postrider_delivery_connections_total\\{reused="${reused}"\\} (\\d+)`, 'm').exec(text)?.[1] ?? 0);
    expect(sessions('false')).toBeGreaterThanOrEqual(1);
  });
});
