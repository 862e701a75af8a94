/**
 * Nothing is done on behalf of a deleted channel once DELETE /channels/{id} has answered 204,
 * whatever its purge has reached (issue 29 item 5): its broadcast is expanded no further, its
 * messages are neither composed nor signed (their jobs never become due), and no webhook request
 * is sent for its events. The purger is held in these tests, as it is while it works through
 * another channel's long history.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { envelopeSender } from '../../src/delivery/return-path.js';
import { ReportMatcher } from '../../src/inbound/report-match.js';
import { recordLinkEvent } from '../../src/tracking/service.js';
import { startDaemonWithDns, stopDaemonWithDns, type TestDaemon } from '../support/daemon.js';
import type { TestDns } from '../support/dns-server.js';
import { holdFinishing } from '../support/hold-finishing.js';
import { setupSender, type Sender } from '../support/sending.js';
import { waitFor } from '../support/wait.js';
import { startWebhookReceiver } from '../support/webhook-receiver.js';

let dns: TestDns;
let t: TestDaemon;

beforeAll(async () => {
  ({ t, dns } = await startDaemonWithDns({ 'webhooks.allowHttp': true, 'webhooks.allowPrivate': true }));
});

afterAll(() => stopDaemonWithDns({ t, dns }));

async function broadcast(s: Sender, n: number): Promise<string> {
  const res = await t.api('POST', '/send/broadcast', {
    headers: { 'x-service-channel-id': s.channelId },
    body: { from: { email: `news@${s.domain}` }, template: { subject: 'News', text: 'Hi' }, messages: Array.from({ length: n }, (_, i) => ({ to: [{ email: `r${i}@example.net` }] })) },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.broadcastId;
}

async function send(s: Sender, to: string): Promise<string> {
  const res = await t.api('POST', '/send/transactional', {
    headers: { 'x-service-channel-id': s.channelId },
    body: { from: { email: `shop@${s.domain}` }, to: [{ email: to }], subject: 'Order', text: 'Hi' },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.messageId;
}

async function deleteChannel(s: Sender): Promise<void> {
  await t.daemon.channelPurger.stop();
  expect((await t.api('DELETE', `/channels/${s.channelId}`)).status).toBe(204);
}

/** The message's jobs that are due (in the queue's due order), read through the port. */
const dueJobsOf = async (messageId: string) => {
  const due = new Set((await t.daemon.store.queue.list({ state: 'queued', limit: 1_000_000 })).map((j) => j.id));
  return (await t.daemon.store.queue.jobsOfMessage(messageId)).filter((j) => due.has(j.id));
};

const awaitsSignature = (messageId: string) => t.daemon.store.messages.isUnfinished(messageId);

describe('after a channel was deleted', () => {
  it('expands none of its broadcasts, and goes on with the next one', async () => {
    const gone = await setupSender(t, dns);
    const kept = await setupSender(t, dns);
    const { expander } = t.daemon.submission;
    await expander.stop(); // both broadcasts wait, the deleted channel's oldest
    const goneId = await broadcast(gone, 20);
    const keptId = await broadcast(kept, 3);
    await deleteChannel(gone);
    try {
      await expander.start();
      await expander.drain();
      expect(await t.daemon.store.broadcasts.get(goneId)).toMatchObject({ cursor: 0, messages: 0 });
      expect((await t.daemon.store.channels.remains(gone.channelId)).messages).toBe(0);
      expect(await t.daemon.store.broadcasts.get(keptId)).toMatchObject({ state: 'done', messages: 3 });
    } finally {
      await t.daemon.channelPurger.start();
      await t.daemon.channelPurger.drain();
    }
  });

  it('composes and signs none of its messages: neither one scheduled after the 204 nor one being signed at it', async () => {
    const s = await setupSender(t, dns);
    const { signing } = t.daemon.submission;
    // Committed, never scheduled: as one waiting in the finishing stage's backlog.
    const notScheduled = vi.spyOn(signing, 'schedule').mockImplementation(() => {});
    let waiting: string;
    try {
      waiting = await send(s, 'later@example.net');
    } finally {
      notScheduled.mockRestore();
    }
    const hold = holdFinishing(t.daemon.pool);
    let signed: string;
    try {
      signed = await send(s, 'now@example.net');
      await waitFor(hold.started, { what: 'the finish task in the pool' });
      await deleteChannel(s);
    } finally {
      hold.restore();
    }
    try {
      // Signed while the delete committed: nothing stored, its job never due.
      await waitFor(async () => !(await awaitsSignature(signed)), { what: 'the signed message to stop waiting' });
      expect(await t.daemon.store.messages.body(signed)).toBeUndefined();
      expect(await dueJobsOf(signed)).toEqual([]);
      // Scheduled after the 204: it never reaches the pool.
      const finish = vi.spyOn(t.daemon.pool, 'finishMany');
      try {
        signing.schedule([waiting]);
        await waitFor(async () => !(await awaitsSignature(waiting)), { what: 'the waiting message to stop waiting' });
        expect(finish).not.toHaveBeenCalled();
      } finally {
        finish.mockRestore();
      }
      expect(await t.daemon.store.messages.body(waiting)).toBeUndefined();
      expect(await dueJobsOf(waiting)).toEqual([]);
    } finally {
      await t.daemon.channelPurger.start();
      await t.daemon.channelPurger.drain();
    }
  });

  it("posts none of its events to an account-wide webhook, and goes on with the others'", async () => {
    const rx = await startWebhookReceiver();
    const gone = await setupSender(t, dns);
    const kept = await setupSender(t, dns);
    const hook = await t.api('POST', '/webhooks', { body: { url: rx.url('/all'), events: ['accepted'] } });
    expect(hook.status, JSON.stringify(hook.body)).toBe(200);
    await t.daemon.webhooks.stop(); // the payloads wait in the outbox, the deleted channel's first
    const goneId = await send(gone, 'a@example.net');
    const keptId = await send(kept, 'b@example.net');
    await deleteChannel(gone);
    try {
      await t.daemon.webhooks.start();
      await waitFor(() => rx.at('/all').some((r) => r.json?.messageId === keptId), { what: "the other channel's payload posted" });
      await waitFor(async () => (await t.daemon.store.webhookOutbox.pendingCount(hook.body.id)) === 0, { what: "the webhook's outbox empty" });
      expect(rx.at('/all').filter((r) => r.json?.messageId === goneId || r.json?.channelId === gone.channelId)).toEqual([]);
    } finally {
      await t.daemon.webhooks.start();
      await rx.close();
      await t.daemon.channelPurger.start();
      await t.daemon.channelPurger.drain();
    }
  });

  it('records no open, click or bounce report for its messages, whatever the purge has reached', async () => {
    const gone = await setupSender(t, dns);
    const messageId = await send(gone, 'c@example.net');
    const message = (await t.daemon.store.messages.get(messageId))!;
    const bounceAddress = envelopeSender(message, 'c@example.net', { secret: await t.daemon.store.meta.trackingSecret(), returnPathLabel: 'bounces' });
    const matcher = new ReportMatcher({ store: t.daemon.store, returnPathLabel: 'bounces' });
    // Before the delete, the bounce address names the message.
    expect((await matcher.match({}, [bounceAddress])).message?.id).toBe(messageId);
    await deleteChannel(gone);
    try {
      const before = (await t.daemon.store.events.ofMessage(messageId)).length;
      await recordLinkEvent(t.daemon.store, 'opened', { kind: 'open', messageId, recipient: 'c@example.net' }, {});
      await recordLinkEvent(t.daemon.store, 'clicked', { kind: 'click', messageId, recipient: 'c@example.net', url: 'https://shop.net/' }, {});
      expect(await t.daemon.store.events.ofMessage(messageId)).toHaveLength(before);
      expect((await matcher.match({}, [bounceAddress])).message).toBeUndefined();
    } finally {
      await t.daemon.channelPurger.start();
      await t.daemon.channelPurger.drain();
    }
  });
});
