/**
 * Issue 29 item 6: reports come from anyone, so a report acts only on the recipient it is tied
 * to. Mail goes out through the real daemon to a real MX, one transaction per recipient, each
 * with its own bounce address (`bounces+<messageId>-<mac>@…`, domain/verp.ts); DSNs (RFC 3464)
 * and feedback reports (RFC 5965) come back over SMTP to the real inbound listener, addressed to
 * what the MX saw in MAIL FROM. Recipient a of a message to a and b cannot bounce or complain
 * about b, a forged mac names nobody, and the old per-message address keeps working for mail with
 * one recipient only. (Repeated reports: inbound.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verpRecipient } from '../../src/domain/verp.js';
import type { MessageRecord } from '../../src/domain/types.js';
import { startDeliveryRig, type DeliveryRig } from '../support/delivery-rig.js';
import { arf, dsn } from '../support/reports.js';
import { waitFor } from '../support/wait.js';
import { sendToInbound } from '../support/inbound.js';

const DOMAIN = 'forgery-mail.net';
let rig: DeliveryRig;

beforeAll(async () => {
  rig = await startDeliveryRig({ mx: { address: '127.0.29.6' }, domains: [DOMAIN], daemon: { 'inbound.enabled': true, 'inbound.port': 0 } });
});

afterAll(() => rig?.stop());

const bounceHost = () => `bounces.${rig.s.domain}`;
const addr = (local: string) => `${local}@${DOMAIN}`;

/** Sends a transactional message through the API and waits until the MX has it for every recipient. */
async function sendAndDeliver(to: string[]): Promise<MessageRecord> {
  const res = await rig.t.api('POST', '/send/transactional', {
    headers: { 'x-service-channel-id': rig.s.channelId },
    body: { from: { email: `shop@${rig.s.domain}` }, to: to.map((email) => ({ email })), subject: 'Order', text: 'Thanks' },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const id: string = res.body.messageId;
  await waitFor(async () => (await rig.t.daemon.store.messages.get(id))?.status === 'sent', { what: `message ${id} delivered` });
  return (await rig.t.daemon.store.messages.get(id))!;
}

/** The MAIL FROM the MX saw for the message's copy to `recipient`. */
function mailFromOf(m: MessageRecord, recipient: string): string {
  const got = rig.mx.received.find((r) => r.from.startsWith(`bounces+${m.id}`) && r.to.includes(recipient));
  expect(got, `the MX received ${m.id} for ${recipient}`).toBeDefined();
  return got!.from;
}

/** Raw bytes to the inbound listener over SMTP; resolves with its reply, rejects with a refusal. */
const deliver = (to: string, raw: string): Promise<string> => sendToInbound(rig.t.daemon.inbound!.port, to, raw);

const hardDsn = (to: string, m: MessageRecord, recipient: string) =>
  dsn({ to, recipient, messageIdHeader: m.messageIdHeader, status: '5.1.1', diagnostic: `550 5.1.1 <${recipient}>... User unknown` });

const eventsOf = async (m: MessageRecord, type: 'bounced' | 'complained') =>
  ((await rig.t.api('GET', `/activity/events?messageId=${m.id}&eventTypes=${type}`)).body.results as Array<{ recipients: string[] }>).map((e) => e.recipients);

const suppression = (email: string) => rig.t.daemon.store.suppressions.get(rig.s.channelId, 'transactional', email);

async function unmatchedCount(kind: 'arf' | 'dsn'): Promise<number> {
  const m = new RegExp(`^postrider_inbound_reports_unmatched_total\\{kind="${kind}"\\} (\\d+)`, 'm').exec(await rig.t.daemon.metrics.render());
  return m ? Number(m[1]) : 0;
}

describe('reports act only on the recipient they are tied to', () => {
  it('sends each recipient its own transaction, whose MAIL FROM names that recipient through a mac', async () => {
    const [a, b] = [addr('ann'), addr('bob')];
    const m = await sendAndDeliver([a, b]);
    const copies = rig.mx.received.filter((r) => r.from.startsWith(`bounces+${m.id}`));
    expect(copies.map((r) => r.to)).toEqual([[a], [b]]);
    const secret = await rig.t.daemon.store.meta.trackingSecret();
    for (const [copy, recipient] of [[copies[0], a], [copies[1], b]] as const) {
      const match = new RegExp(`^bounces\\+${m.id}-([0-9a-f]{16})@${bounceHost().replace(/\./g, '\\.')}$`).exec(copy.from);
      expect(match, copy.from).not.toBeNull();
      // RFC 5321 4.5.3.1.1: a local part is at most 64 octets.
      expect(copy.from.split('@')[0].length).toBeLessThanOrEqual(64);
      expect(verpRecipient(secret, m.id, match![1], [a, b])).toBe(recipient);
    }
  });

  it("a DSN that recipient a sends to a's bounce address naming b does not bounce or suppress b", async () => {
    const [a, b] = [addr('cat'), addr('dan')];
    const m = await sendAndDeliver([a, b]);
    expect(await deliver(mailFromOf(m, a), hardDsn(mailFromOf(m, a), m, b))).toMatch(/^250/);
    expect(await suppression(b)).toBeUndefined();
    // The DSN came to a's address, so it is about a's copy (a forwarded mailbox names another address).
    expect(await eventsOf(m, 'bounced')).toEqual([[a]]);
  });

  it("an ARF naming b sent to a's bounce address does not suppress b", async () => {
    const [a, b] = [addr('eve'), addr('fay')];
    const m = await sendAndDeliver([a, b]);
    const verpA = mailFromOf(m, a);
    const raw = arf({ to: verpA, originalMailFrom: verpA, recipient: b, messageIdHeader: m.messageIdHeader, originalTo: b, returnPath: verpA });
    expect(await deliver(verpA, raw)).toMatch(/^250/);
    expect(await suppression(b)).toBeUndefined();
    expect(await eventsOf(m, 'complained')).toEqual([[a]]);
  });

  it("a genuine DSN to a recipient's own bounce address bounces and suppresses that recipient only", async () => {
    const [a, b] = [addr('gil'), addr('hal')];
    const m = await sendAndDeliver([a, b]);
    expect(await deliver(mailFromOf(m, b), hardDsn(mailFromOf(m, b), m, b))).toMatch(/^250/);
    expect(await eventsOf(m, 'bounced')).toEqual([[b]]);
    expect(await suppression(b)).toMatchObject({ reason: 'bounce' });
    expect(await suppression(a)).toBeUndefined();
  });

  it('refuses a forged mac at RCPT, and a report quoting one elsewhere is not tied to any recipient', async () => {
    const [a, b] = [addr('ivy'), addr('jon')];
    const m = await sendAndDeliver([a, b]);
    const forged = `bounces+${m.id}-0123456789abcdef@${bounceHost()}`;
    await expect(deliver(forged, hardDsn(forged, m, b))).rejects.toMatchObject({ responseCode: 550 });
    // Sent to a feedback-loop address with the forged address as Original-Mail-From: only the
    // Message-ID ties it to the message, and the message had two recipients.
    const before = await unmatchedCount('arf');
    const fbl = `fbl@${bounceHost()}`;
    expect(await deliver(fbl, arf({ to: fbl, originalMailFrom: forged, recipient: b, messageIdHeader: m.messageIdHeader, originalTo: b }))).toMatch(/^250/);
    expect(await unmatchedCount('arf')).toBe(before + 1);
    expect(await eventsOf(m, 'complained')).toEqual([]);
    expect(await suppression(b)).toBeUndefined();
  });

  it('keeps the old per-message bounce address working for a message with one recipient, and not for one with several', async () => {
    const single = await sendAndDeliver([addr('kim')]);
    const old = (m: MessageRecord) => `bounces+${m.id}@${bounceHost()}`;
    expect(await deliver(old(single), hardDsn(old(single), single, addr('kim')))).toMatch(/^250/);
    expect(await eventsOf(single, 'bounced')).toEqual([[addr('kim')]]);
    expect(await suppression(addr('kim'))).toMatchObject({ reason: 'bounce' });

    const several = await sendAndDeliver([addr('lea'), addr('max')]);
    const before = await unmatchedCount('dsn');
    expect(await deliver(old(several), hardDsn(old(several), several, addr('max')))).toMatch(/^250/);
    expect(await unmatchedCount('dsn')).toBe(before + 1);
    expect(await eventsOf(several, 'bounced')).toEqual([]);
    expect(await suppression(addr('max'))).toBeUndefined();
  });
});
