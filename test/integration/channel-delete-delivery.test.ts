/**
 * Nothing of a deleted channel is sent once DELETE /channels/{id} has answered 204 (issue 29
 * item 5): the tombstone is committed before the 204, and the dispatcher reads it right before
 * each attempt's MAIL FROM, the start of a mail transaction (RFC 5321 3.3), whatever the purge
 * has reached. Transactions begun before the 204 may finish. A real daemon delivers a channel's
 * queue at a low delivery.rate to a slow loopback MX, with past history for the purge to walk
 * (before the fix, 12 of its MAIL FROM came after the 204).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDeliveryRig, type DeliveryRig } from '../support/delivery-rig.js';
import { setupSender, type Sender } from '../support/sending.js';
import { waitFor } from '../support/wait.js';

const INBOX = 'slow-inbox.net';
let rig: DeliveryRig;

beforeAll(async () => {
  // Each DATA reply held, so transactions are in flight at the 204; 10 messages a second.
  rig = await startDeliveryRig({ mx: { address: '127.0.29.5', starttls: false, dataDelayMs: 100 }, domains: [INBOX], daemon: { 'delivery.rate': 10 } });
});

afterAll(() => rig?.stop());

async function broadcast(s: Sender, n: number, prefix: string): Promise<void> {
  const messages = Array.from({ length: n }, (_, i) => ({ to: [{ email: `${prefix}${i}@${INBOX}` }] }));
  const res = await rig.t.api('POST', '/send/broadcast', {
    headers: { 'x-service-channel-id': s.channelId },
    body: { from: { email: `news@${s.domain}` }, template: { subject: 'News', text: 'Hello' }, messages },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  await rig.t.daemon.submission.expander.drain();
}

/** The MAIL FROM commands the MX read for the sender's messages (their return path is at its domain). */
const mailFromsOf = (s: Sender, from = 0) => rig.mx.mailFroms.slice(from).filter((a) => a.toLowerCase().endsWith(`.${s.domain}`));

describe('a deleted channel', () => {
  it('starts no SMTP transaction after its DELETE answered 204, however long its history', async () => {
    const { t } = rig;
    const gone = rig.s;
    // Past history for the purge to walk before it reaches the queue: sandbox messages (sent at once).
    expect((await t.api('PATCH', `/channels/${gone.channelId}`, { body: { deliveryType: 'sandbox' } })).status).toBe(200);
    await broadcast(gone, 3_000, 'past');
    expect((await t.api('PATCH', `/channels/${gone.channelId}`, { body: { deliveryType: 'live' } })).status).toBe(200);
    await broadcast(gone, 300, 'queued');
    await waitFor(() => mailFromsOf(gone).length >= 5, { what: 'the channel queue being delivered' });

    const del = await t.api('DELETE', `/channels/${gone.channelId}`);
    expect(del.status).toBe(204);
    // One more turn: what the daemon wrote before the 204 is read by the MX in this process.
    await new Promise<void>((resolve) => setImmediate(resolve));
    const atDelete = rig.mx.mailFroms.length;
    const sentBefore = mailFromsOf(gone).length;
    expect(sentBefore).toBeLessThan(300);

    // The dispatcher has moved past the deleted queue: another channel's message, due after all
    // of it, reaches the same MX, and the purge is over with none of the channel's jobs left.
    const kept = await setupSender(t, rig.dns);
    const res = await t.api('POST', '/send/transactional', {
      headers: { 'x-service-channel-id': kept.channelId },
      body: { from: { email: `shop@${kept.domain}` }, to: [{ email: `after@${INBOX}` }], subject: 'After', text: 'Hi' },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    await waitFor(() => rig.mx.received.some((r) => r.to.includes(`after@${INBOX}`)), { what: "the other channel's message delivered", timeout: 30_000 });
    await waitFor(async () => (await t.daemon.store.channels.pendingPurges()).length === 0, { what: 'the purge finished', timeout: 30_000 });
    // The other message's outcome is recorded a moment after the MX took it.
    await waitFor(
      async () => {
        const { queued, leased } = await t.daemon.store.queue.counts(Date.now());
        return queued === 0 && leased === 0;
      },
      { what: 'the queue empty' },
    );
    expect((await t.api('GET', `/channels/${gone.channelId}`)).status).toBe(404);

    expect(mailFromsOf(gone, atDelete)).toEqual([]);
    expect(mailFromsOf(kept, atDelete)).toHaveLength(1);
  });
});
