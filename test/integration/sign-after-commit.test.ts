/**
 * DKIM signing after the commit (src/submission/finishing.ts): the 200 of a send does not wait for
 * the signature; the message's jobs wait for it instead, and what the MX receives is the stored
 * message with its signature, verified by mailauth against the published DNS record. A stop
 * between the commit and the signature loses nothing: the next start signs from the store.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { TestDaemon } from '../support/daemon.js';
import { startDeliveryRig, type DeliveryRig } from '../support/delivery-rig.js';
import type { TestDns } from '../support/dns-server.js';
import type { MxServer } from '../support/mx-server.js';
import { publish, type Sender } from '../support/sending.js';
import { signedBody, verifyDkim } from '../support/signing.js';
import { waitFor } from '../support/wait.js';
import { holdFinishing } from '../support/hold-finishing.js';

const RCPT_DOMAIN = 'signed-mail.net';

let dns: TestDns;
let mx: MxServer;
let t: TestDaemon;
let s: Sender;
let rig: DeliveryRig | undefined;

beforeAll(async () => {
  rig = await startDeliveryRig({ mx: { address: '127.0.24.2', starttls: false }, domains: [RCPT_DOMAIN] });
  ({ dns, mx, t, s } = rig);
});

afterAll(() => rig?.stop());

async function send(to: string): Promise<string> {
  const res = await t.api('POST', '/send/transactional', {
    headers: { 'x-service-channel-id': s.channelId },
    body: { from: { email: `app@${s.domain}` }, to: [{ email: to }], subject: 'Signed later', text: 'Hello' },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.messageId;
}

async function received(to: string): Promise<Buffer> {
  return (await waitFor(() => mx.received.find((m) => m.to.includes(to)), { what: `a delivery to ${to}`, timeout: 15_000 })).raw;
}

async function dkimResults(raw: Buffer): Promise<Array<{ result: string; domain: string }>> {
  const r = await verifyDkim(dns, raw);
  return r.results.map((x: { status: { result: string }; signingDomain: string }) => ({ result: x.status.result, domain: x.signingDomain }));
}

describe('DKIM signing after the commit', () => {
  it('answers the send while its signature is held, then delivers the stored message signed once it is released', async () => {
    const hold = holdFinishing(t.daemon.pool);
    try {
      const to = `ann@${RCPT_DOMAIN}`;
      const id = await send(to);
      // The 200 came while the finish task waits: the message is committed as its request (no
      // body yet: it is composed and signed after the commit), not yet due.
      await waitFor(hold.started, { what: 'the finish task' });
      expect((await t.daemon.store.messages.isUnfinished(id))).toBe(true);
      expect((await t.daemon.store.messages.body(id))).toBeUndefined();
      expect(mx.received.some((m) => m.to.includes(to))).toBe(false);
      // Operators see the wait in /metrics (the queue gauges do not count jobs that are not due yet).
      expect(await awaitingSignatureGauge()).toBe(1);
      expect(await oldestAwaitingGauge()).toBeGreaterThanOrEqual(0);

      hold.release();
      const raw = await received(to);
      expect(await dkimResults(raw)).toEqual([{ result: 'pass', domain: s.domain }]);
      expect(await awaitingSignatureGauge()).toBe(0);
      expect(await oldestAwaitingGauge()).toBe(0);
      // What was delivered is what the store (and GET /activity/messages/{id}) shows.
      expect(raw.toString()).toBe((await signedBody(t.daemon.store, id)).toString());
    } finally {
      hold.restore();
    }
  });

  it('signs with the key the domain has when signing: a key rotated after the commit is the one used', async () => {
    const held = vi.spyOn(t.daemon.submission.signing, 'schedule').mockImplementation(() => {});
    const to = `cy@${RCPT_DOMAIN}`;
    let id: string;
    try {
      id = await send(to);
    } finally {
      held.mockRestore();
    }
    // Rotation: a new pending key, published, promoted by the check; the old key is gone.
    const pending = await t.api('POST', `/domains/${s.domainId}/rotate-key`);
    expect(pending.status, JSON.stringify(pending.body)).toBe(200);
    publish(dns, pending.body);
    const verified = await t.api('POST', `/domains/${s.domainId}/verify`);
    expect(verified.body.domainKeyActive.host).toBe(pending.body.host);

    t.daemon.submission.signing.schedule([id]);
    const raw = await received(to);
    expect(await dkimResults(raw)).toEqual([{ result: 'pass', domain: s.domain }]);
    const selector = /^DKIM-Signature:[^]*?\bs=([^;\s]+)/im.exec(raw.toString())?.[1];
    expect(`${selector}._domainkey.${s.domain}`).toBe(pending.body.host);
  });

  it('signs and delivers after a restart a message committed before the signing stage saw it', async () => {
    // As if the process had died right after the commit: the stage is never told of the message.
    const lost = vi.spyOn(t.daemon.submission.signing, 'schedule').mockImplementation(() => {});
    const to = `bob@${RCPT_DOMAIN}`;
    let id: string;
    try {
      id = await send(to);
    } finally {
      lost.mockRestore();
    }
    expect((await t.daemon.store.messages.isUnfinished(id))).toBe(true);
    await t.restart();
    const raw = await received(to);
    expect(await dkimResults(raw)).toEqual([{ result: 'pass', domain: s.domain }]);
    expect((await t.daemon.store.messages.isUnfinished(id))).toBe(false);
  });
});

/** postrider_messages_awaiting_signature as /metrics shows it (loopback clients need no token). */
async function awaitingSignatureGauge(): Promise<number> {
  const text = await (await fetch(`${t.url}/metrics`)).text();
  const m = /^postrider_messages_awaiting_signature (\d+)$/m.exec(text);
  if (!m) throw new Error('postrider_messages_awaiting_signature is missing from /metrics');
  return Number(m[1]);
}

/** postrider_messages_awaiting_signature_oldest_age_seconds as /metrics shows it. */
async function oldestAwaitingGauge(): Promise<number> {
  const text = await (await fetch(`${t.url}/metrics`)).text();
  const m = /^postrider_messages_awaiting_signature_oldest_age_seconds ([\d.e+-]+)$/m.exec(text);
  if (!m) throw new Error('postrider_messages_awaiting_signature_oldest_age_seconds is missing from /metrics');
  return Number(m[1]);
}
