/**
 * DELETE /channels/{id} (spec 4.5): from the 204 on nothing of the channel is readable; its
 * messages, events, counters and queued deliveries leave the store in the background, in
 * bounded batches that resume after a restart. Other channels keep everything.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemonWithDns, stopDaemonWithDns, type TestDaemon } from '../support/daemon.js';
import type { TestDns } from '../support/dns-server.js';
import { newAccount } from '../support/domains.js';
import { setupSender, type Sender } from '../support/sending.js';
import { signedBody } from '../support/signing.js';

let dns: TestDns;
let t: TestDaemon;

beforeAll(async () => {
  ({ t, dns } = await startDaemonWithDns());
});

afterAll(() => stopDaemonWithDns({ t, dns }));

async function send(s: Sender, n: number, tag = 'order'): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const res = await t.api('POST', '/send/transactional', {
      headers: { 'x-service-channel-id': s.channelId },
      body: { from: { email: `shop@${s.domain}` }, to: [{ email: `r${i}@example.net` }], subject: `Order ${i}`, text: 'Hi', tags: [tag] },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    ids.push(res.body.messageId);
  }
  return ids;
}

/** Everything the store still holds of a channel, counted by scanning (the port's channels.remains). */
const leftovers = (channelId: string) => t.daemon.store.channels.remains(channelId);

/** The queued jobs, read through the due order: as many as the queue counts when no index entry is left dangling. */
async function queuedJobs() {
  const jobs = await t.daemon.store.queue.list({ state: 'queued', limit: 1_000_000 });
  expect(jobs).toHaveLength((await t.daemon.store.queue.counts(Date.now())).queued);
  return jobs;
}

const channelKeyOf = async (channelId: string) => (await t.daemon.store.apiKeys.create({ accountId: t.accountId, channelId })).token;

const totalsOf = async (query = '') => (await t.api('GET', `/statistics/totals${query}`)).body;

describe('DELETE /channels/{id}', () => {
  it('hides everything of the channel at the 204 and removes it in the background, also after a restart, keeping other channels', async () => {
    const gone = await setupSender(t, dns); // live, delivery disabled in tests: its jobs stay queued
    const kept = await setupSender(t, dns);
    const goneIds = await send(gone, 3);
    const keptIds = await send(kept, 2);
    // Bodies exist once the finishing stage composed them, a moment after each 200.
    for (const id of [...goneIds, ...keptIds]) await signedBody(t.daemon.store, id);
    await t.api('POST', '/suppressions', { body: { channelId: gone.channelId, mailType: 'transactional', emails: ['x@example.net'] } });
    dns.set('hooks.example.org', 'A', ['93.184.215.14']);
    const hook = await t.api('POST', '/webhooks', { body: { url: 'https://hooks.example.org/x', events: ['delivered'], channelId: gone.channelId } });
    expect(hook.status, JSON.stringify(hook.body)).toBe(200);
    const goneKey = await channelKeyOf(gone.channelId);
    expect(await leftovers(gone.channelId)).toMatchObject({ messages: 3, bodies: 3, jobs: 3 });
    const before = await totalsOf();
    const listedBefore = (await t.api('GET', '/activity/events?limit=500')).body; // also fills the count cache
    const goneEvents = listedBefore.results.filter((e: any) => e.channelId === gone.channelId).length;
    expect(goneEvents).toBeGreaterThan(0);
    // A broadcast of the channel too (its message is the fourth of the channel's messages).
    const broadcast = await t.api('POST', '/send/broadcast', {
      headers: { 'x-service-channel-id': gone.channelId },
      body: { from: { email: `news@${gone.domain}` }, template: { subject: 'News', text: 'Hi' }, messages: [{ to: [{ email: 'a@example.net' }] }] },
    });
    expect(broadcast.status, JSON.stringify(broadcast.body)).toBe(200);
    await t.daemon.submission.expander.drain();

    // The purger is held so the reads below see the state between the 204 and the purge.
    await t.daemon.channelPurger.stop();
    const del = await t.api('DELETE', `/channels/${gone.channelId}`);
    expect(del.status).toBe(204);
    expect(del.body).toBeNull();

    expect((await t.api('GET', `/channels/${gone.channelId}`)).status).toBe(404);
    for (const path of [
      `/activity/events?channelId=${gone.channelId}`,
      `/activity/messages?channelId=${gone.channelId}`,
      `/statistics/totals?channelId=${gone.channelId}`,
      `/statistics/daily?channelId=${gone.channelId}`,
      `/suppressions?channelId=${gone.channelId}&mailType=transactional`,
      `/activity/messages/${goneIds[0]}`,
      `/webhooks/${hook.body.id}`,
      `/broadcasts?channelId=${gone.channelId}`,
      `/broadcasts/${broadcast.body.broadcastId}`,
    ]) {
      expect((await t.api('GET', path)).status, path).toBe(404);
    }
    expect((await t.api('GET', '/channels', { key: goneKey })).status).toBe(401);
    const all = (await t.api('GET', '/activity/events?limit=500')).body;
    expect(all.results.some((e: any) => e.channelId === gone.channelId)).toBe(false);
    expect(all.totalCount).toBe(listedBefore.totalCount - goneEvents);
    expect(all.results.filter((e: any) => keptIds.includes(e.messageId)).length).toBeGreaterThan(0);
    const byMessage = (await t.api('GET', `/activity/events?messageId=${goneIds[0]}`)).body;
    expect(byMessage.results).toEqual([]);
    const after = await totalsOf();
    expect(after.transactional.sent).toBe(before.transactional.sent - 3);
    // Still in the store, waiting for the purger: the purge is recorded durably with the 204.
    expect((await leftovers(gone.channelId)).messages).toBe(4);
    expect(await t.daemon.store.channels.pendingPurges()).toEqual([gone.channelId]);

    await t.restart(); // the purge resumes at start
    await t.daemon.channelPurger.drain();
    expect(await t.daemon.store.channels.pendingPurges()).toEqual([]);
    expect(await leftovers(gone.channelId)).toEqual({ messages: 0, bodies: 0, jobs: 0, events: 0, stats: 0, indexEntries: 0, inboundMessages: 0, inboundCounts: 0 });
    await queuedJobs();
    expect(await leftovers(kept.channelId)).toMatchObject({ messages: 2, bodies: 2, jobs: 2 });
    expect((await leftovers(kept.channelId)).events).toBeGreaterThan(0);
    expect((await leftovers(kept.channelId)).stats).toBeGreaterThan(0);
    expect((await totalsOf()).transactional.sent).toBe(after.transactional.sent);
    expect((await t.api('GET', `/activity/messages/${keptIds[0]}`)).status).toBe(200);
  });

  it('purges in bounded transactions', async () => {
    const s = await setupSender(t, dns);
    await send(s, 6);
    await t.daemon.channelPurger.stop();
    expect((await t.api('DELETE', `/channels/${s.channelId}`)).status).toBe(204);
    let batches = 0;
    for (;;) {
      const r = await t.daemon.store.channels.purgeBatch(s.channelId, 4);
      expect(r.removed).toBeLessThanOrEqual(4);
      batches++;
      if (r.done) break;
    }
    expect(batches).toBeGreaterThan(3);
    expect(await leftovers(s.channelId)).toEqual({ messages: 0, bodies: 0, jobs: 0, events: 0, stats: 0, indexEntries: 0, inboundMessages: 0, inboundCounts: 0 });
    await t.daemon.channelPurger.start();
  });

  it('starts purging right after the 204 while the daemon runs, also for a channel deleted during a purge', async () => {
    const a = await setupSender(t, dns);
    const b = await setupSender(t, dns);
    await send(a, 2);
    await send(b, 2);
    expect((await t.api('DELETE', `/channels/${a.channelId}`)).status).toBe(204);
    expect((await t.api('DELETE', `/channels/${b.channelId}`)).status).toBe(204);
    await t.daemon.channelPurger.drain();
    expect((await leftovers(a.channelId)).messages).toBe(0);
    expect((await leftovers(b.channelId)).messages).toBe(0);
    expect(await t.daemon.store.channels.pendingPurges()).toEqual([]);
  });

  it('removes the queued jobs first, before it walks the channel history', async () => {
    const s = await setupSender(t, dns, { deliveryType: 'sandbox' });
    await send(s, 8); // history: sandbox messages, sent at once, with their events
    expect((await t.api('PATCH', `/channels/${s.channelId}`, { body: { deliveryType: 'live' } })).status).toBe(200);
    const queued = await send(s, 3);
    for (const id of queued) await signedBody(t.daemon.store, id);
    expect(await leftovers(s.channelId)).toMatchObject({ messages: 11, jobs: 3 });
    await t.daemon.channelPurger.stop();
    expect((await t.api('DELETE', `/channels/${s.channelId}`)).status).toBe(204);
    // One batch, far smaller than the history: the queue is empty of the channel after it.
    const first = await t.daemon.store.channels.purgeBatch(s.channelId, 6);
    expect(first.done).toBe(false);
    expect((await leftovers(s.channelId)).jobs).toBe(0);
    expect((await leftovers(s.channelId)).messages).toBeGreaterThan(5);
    expect((await queuedJobs()).filter((j) => queued.includes(j.messageId))).toEqual([]);
    await t.daemon.channelPurger.start();
    await t.daemon.channelPurger.drain();
    expect(await leftovers(s.channelId)).toEqual({ messages: 0, bodies: 0, jobs: 0, events: 0, stats: 0, indexEntries: 0, inboundMessages: 0, inboundCounts: 0 });
  });

  it("removes the channel's broadcasts with their rows, and the messages they made", async () => {
    const s = await setupSender(t, dns);
    await t.api('POST', '/suppressions', { body: { channelId: s.channelId, mailType: 'broadcast', emails: ['c@example.net'] } });
    const res = await t.api('POST', '/send/broadcast', {
      headers: { 'x-service-channel-id': s.channelId },
      body: {
        from: { email: `news@${s.domain}` },
        template: { subject: 'News', text: 'Hi' },
        messages: [{ to: [{ email: 'a@example.net' }] }, { to: [{ email: 'b@example.net' }] }, { to: [{ email: 'c@example.net' }] }],
      },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const id = res.body.broadcastId;
    await t.daemon.submission.expander.drain();
    expect((await t.api('GET', `/broadcasts/${id}`)).status).toBe(200);
    const rows = async () => (await t.daemon.store.channels.broadcastRemains(id, s.channelId)).rows;
    expect(await rows()).toBeGreaterThan(0);
    expect((await leftovers(s.channelId)).messages).toBe(2);

    expect((await t.api('DELETE', `/channels/${s.channelId}`)).status).toBe(204);
    await t.daemon.channelPurger.drain();
    expect((await t.api('GET', `/broadcasts/${id}`)).status).toBe(404);
    expect(await rows()).toBe(0);
    const remains = await t.daemon.store.channels.broadcastRemains(id, s.channelId);
    // The record, its counters and its statistics are gone too.
    expect(remains.record).toBe(false);
    expect(remains.counters).toBe(false);
    expect(remains.statistics).toBe(false);
    expect(await leftovers(s.channelId)).toEqual({ messages: 0, bodies: 0, jobs: 0, events: 0, stats: 0, indexEntries: 0, inboundMessages: 0, inboundCounts: 0 });
  });

  it("answers 401 without a key, 403 for another account's channel or a channel key, 404 for an unknown or deleted one", async () => {
    const id = (await t.api('POST', '/channels', { body: { name: 'x' } })).body.id;
    expect((await t.api('DELETE', `/channels/${id}`, { key: null })).status).toBe(401);
    const { key: otherKey } = await newAccount(t);
    expect((await t.api('DELETE', `/channels/${id}`, { key: otherKey })).status).toBe(403);
    const channelKey = await channelKeyOf(id);
    expect((await t.api('DELETE', `/channels/${id}`, { key: channelKey })).status).toBe(403);
    expect((await t.api('DELETE', '/channels/00000000-0000-4000-8000-000000000000')).status).toBe(404);
    expect((await t.api('DELETE', `/channels/${id}`)).status).toBe(204);
    const again = await t.api('DELETE', `/channels/${id}`);
    expect(again.status).toBe(404);
    expect(again.body.code).toBe('channel_not_found');
  });
});
