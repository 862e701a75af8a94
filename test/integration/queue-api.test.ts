/**
 * GET /queue, GET /queue/messages, POST /queue/messages/{id}/retry, DELETE /queue/messages/{id}
 * against a real daemon whose delivery is off, so live messages stay queued. Each test works in
 * an account of its own, so counts are its own.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { DeliveryJob } from '../../src/domain/types.js';
import { channelKey, newAccount } from '../support/domains.js';
import { startDaemonWithDns, stopDaemonWithDns, type TestDaemon } from '../support/daemon.js';
import type { TestDns } from '../support/dns-server.js';
import { setupSender, type Sender } from '../support/sending.js';
import { signedBody } from '../support/signing.js';
import { waitFor } from '../support/wait.js';
import { holdFinishing } from '../support/hold-finishing.js';

let dns: TestDns;
let t: TestDaemon;

beforeAll(async () => {
  ({ t, dns } = await startDaemonWithDns());
});

afterAll(() => stopDaemonWithDns({ t, dns }));

interface Account {
  accountId: string;
  key: string;
  live: Sender;
}

async function account(): Promise<Account> {
  const a = await newAccount(t);
  return { ...a, live: await setupSender(t, dns, { key: a.key }) };
}

async function send(a: Account, to: string[], s: Sender = a.live, subject = 'Queued'): Promise<string> {
  const res = await t.api('POST', '/send/transactional', {
    key: a.key,
    headers: { 'x-service-channel-id': s.channelId },
    body: { from: { email: `news@${s.domain}` }, to: to.map((email) => ({ email })), subject, text: 'Hi' },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  await signedBody(t.daemon.store, res.body.messageId);
  return res.body.messageId;
}

/** As delivery would have: one deferred attempt of each job of the message, recorded through the queue. */
async function deferOnce(messageId: string, reply: { code: number; enhanced: string; text: string }): Promise<void> {
  const store = t.daemon.store;
  const { jobs } = await lease((j) => j.messageId === messageId);
  await store.queue.recordOutcomes(
    jobs.map((job) => ({
      job,
      attemptAt: new Date(),
      result: {
        recipients: job.recipients.map((recipient) => ({ recipient, outcome: 'deferred', category: 'other', phase: 'rcpt', smtpCode: reply.code, enhancedCode: reply.enhanced, response: reply.text })),
        mx: `mx.${job.domain}`,
        tls: false,
        response: reply.text,
      },
      // Back in the queue an hour later, as the retry schedule would put it.
      nextDueAtMs: Date.parse(job.dueAt) + 3_600_000,
    })),
  );
}

/** Leases the jobs `accept` takes, as the (disabled) dispatcher would. */
function lease(accept: (j: DeliveryJob) => boolean) {
  return t.daemon.store.queue.lease({ owner: 'local', nowMs: Date.now(), max: 10, leaseMs: 60_000, accept });
}

/** The ids of the jobs in due order (the queue's queued jobs: not those whose message awaits its signature). */
async function dueJobIds(): Promise<string[]> {
  return (await t.daemon.store.queue.list({ state: 'queued', limit: Number.MAX_SAFE_INTEGER })).map((j) => j.id);
}

function jobsOfMessage(id: string): Promise<DeliveryJob[]> {
  return t.daemon.store.queue.jobsOfMessage(id);
}

describe('GET /queue', () => {
  it('counts waiting messages per destination with the oldest queued time, the next attempt and the last reply', async () => {
    const a = await account();
    const first = await send(a, ['ann@grove-mail.net', 'bob@harbor-post.org']);
    await send(a, ['cid@grove-mail.net']);
    await deferOnce(first, { code: 451, enhanced: '4.7.1', text: '451 4.7.1 Greylisted, try later' });

    const res = await t.api('GET', '/queue', { key: a.key });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ destinationCount: 2, scannedMessages: 2, complete: true });
    const [grove, harbor] = res.body.results;
    expect(grove).toMatchObject({ destination: 'grove-mail.net', site: 'grove-mail.net', messages: 2, sending: 0, lastReply: { smtpCode: 451, enhancedCode: '4.7.1', response: '451 4.7.1 Greylisted, try later', outcome: 'deferred', mx: 'mx.grove-mail.net' } });
    expect(harbor).toMatchObject({ destination: 'harbor-post.org', messages: 1, sending: 0 });
    // grove's second message has no attempt yet and is due now: it is the next attempt.
    expect(Date.parse(grove.nextAttemptAt)).toBeLessThanOrEqual(Date.now());
    expect(Date.parse(harbor.nextAttemptAt)).toBeGreaterThan(Date.now() + 3_000_000);
    expect(Date.parse(grove.oldestQueuedAt)).toBeLessThanOrEqual(Date.parse(grove.nextAttemptAt));
  });

  it('shows a channel key its own channel only, and limits the destinations listed', async () => {
    const a = await account();
    const other = await setupSender(t, dns, { key: a.key });
    await send(a, ['ann@grove-mail.net']);
    await send(a, ['bob@harbor-post.org', 'cid@isle-mail.net'], other);
    const ck = await channelKey(t, a.accountId, other.channelId);
    const own = await t.api('GET', '/queue', { key: ck });
    expect(own.body.results.map((d: { destination: string }) => d.destination)).toEqual(['harbor-post.org', 'isle-mail.net']);
    const limited = await t.api('GET', '/queue?limit=1', { key: a.key });
    expect(limited.body).toMatchObject({ destinationCount: 3, results: [{ destination: 'grove-mail.net' }] });
  });

  it('names the MX site delivery groups a destination under, once the daemon has resolved it', async () => {
    const a = await account();
    await send(a, ['ann@glade-mail.net']);
    // What an MX lookup tells the dispatcher (delivery/mx.ts → SiteConcurrency.learn).
    (t.daemon.delivery as unknown as { sites: { learn(domain: string, site: string): void } }).sites.learn('glade-mail.net', 'mx1.shared-host.net,mx2.shared-host.net');
    const res = await t.api('GET', '/queue', { key: a.key });
    expect(res.body.results).toEqual([expect.objectContaining({ destination: 'glade-mail.net', site: 'mx1.shared-host.net,mx2.shared-host.net' })]);
  });

  it('refuses a limit out of range with 422 on /limit', async () => {
    const res = await t.api('GET', '/queue?limit=0');
    expect(res.status).toBe(422);
    expect(Object.keys(res.body.errors)).toEqual(['/limit']);
  });
});

describe('GET /queue/messages', () => {
  it('lists queued messages oldest first with their waiting recipients, and pages with after', async () => {
    const a = await account();
    const ids = [await send(a, ['ann@grove-mail.net'], a.live, 'One'), await send(a, ['bob@grove-mail.net', 'cid@harbor-post.org'], a.live, 'Two'), await send(a, ['dee@harbor-post.org'], a.live, 'Three')];
    const page1 = await t.api('GET', '/queue/messages?limit=2', { key: a.key });
    expect(page1.status).toBe(200);
    expect(page1.body.results.map((m: { messageId: string }) => m.messageId)).toEqual(ids.slice(0, 2));
    expect(page1.body.results[1]).toMatchObject({
      channelId: a.live.channelId,
      subject: 'Two',
      status: 'queued',
      to: ['bob@grove-mail.net', 'cid@harbor-post.org'],
      attempts: 0,
      lastReply: null,
      destinations: [
        { destination: expect.any(String), state: 'queued', attempts: 0, lastReply: null },
        { destination: expect.any(String), state: 'queued', attempts: 0, lastReply: null },
      ],
    });
    const page2 = await t.api('GET', `/queue/messages?limit=2&after=${page1.body.after}`, { key: a.key });
    expect(page2.body.results.map((m: { messageId: string }) => m.messageId)).toEqual([ids[2]]);
    const page3 = await t.api('GET', `/queue/messages?after=${page2.body.after}`, { key: a.key });
    expect(page3.body.results).toEqual([]);
    expect(page3.headers.get('x-page-partial')).toBeNull();
  });

  it('filters on a destination, in any case and with a root dot', async () => {
    const a = await account();
    await send(a, ['ann@grove-mail.net']);
    const both = await send(a, ['bob@grove-mail.net', 'cid@harbor-post.org']);
    const res = await t.api('GET', '/queue/messages?destination=Harbor-Post.ORG.', { key: a.key });
    expect(res.body.results).toHaveLength(1);
    expect(res.body.results[0]).toMatchObject({ messageId: both, to: ['cid@harbor-post.org'], destinations: [{ destination: 'harbor-post.org' }] });
  });

  it('refuses a malformed destination and bad paging together with 422', async () => {
    const res = await t.api('GET', '/queue/messages?destination=not_a_domain&limit=501&after=-1');
    expect(res.status).toBe(422);
    expect(Object.keys(res.body.errors).sort()).toEqual(['/after', '/destination', '/limit']);
  });

  it('stops a walk at its scan limit and says where to go on', async () => {
    const a = await account();
    const ids = [await send(a, ['ann@grove-mail.net']), await send(a, ['bob@grove-mail.net']), await send(a, ['cid@harbor-post.org'])];
    const walk = await t.daemon.store.queue.walkAccount({ accountId: a.accountId, domain: 'harbor-post.org', afterSeq: 0, limit: 10, scanLimit: 2 });
    expect(walk).toMatchObject({ messages: [], scanned: 2, reachedEnd: false });
    const rest = await t.daemon.store.queue.walkAccount({ accountId: a.accountId, domain: 'harbor-post.org', afterSeq: walk.lastSeq, limit: 10, scanLimit: 2 });
    expect(rest.messages.map((m) => m.accepted.messageId)).toEqual([ids[2]]);
    expect(rest.reachedEnd).toBe(true);
  });
});

describe('messages still being composed and signed', () => {
  it('counts them as preparing with no next attempt, then as due once they are signed', async () => {
    const a = await account();
    const signed = await send(a, ['ann@grove-mail.net'], a.live, 'Signed');
    const hold = holdFinishing(t.daemon.pool);
    try {
      const res = await t.api('POST', '/send/transactional', {
        key: a.key,
        headers: { 'x-service-channel-id': a.live.channelId },
        body: { from: { email: `news@${a.live.domain}` }, to: [{ email: 'bob@grove-mail.net' }, { email: 'cid@harbor-post.org' }], subject: 'Held', text: 'Hi' },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const held: string = res.body.messageId;
      await waitFor(hold.started, { what: 'the finish task' });

      const summary = await t.api('GET', '/queue', { key: a.key });
      // Once per message, though it goes to two destinations.
      expect(summary.body).toMatchObject({ scannedMessages: 2, preparing: 1 });
      const [grove, harbor] = summary.body.results;
      // grove's signed message is due (its creation time); the held one is counted apart, not due.
      expect(grove).toMatchObject({ destination: 'grove-mail.net', messages: 2, sending: 0, preparing: 1 });
      expect(grove.nextAttemptAt).toBe((await jobsOfMessage(signed))[0].dueAt);
      expect(harbor).toMatchObject({ destination: 'harbor-post.org', messages: 1, sending: 0, preparing: 1, nextAttemptAt: null });

      const page = await t.api('GET', '/queue/messages', { key: a.key });
      expect(page.body.results.map((m: { messageId: string; nextAttemptAt: string | null }) => [m.messageId, m.nextAttemptAt === null])).toEqual([
        [signed, false],
        [held, true],
      ]);
      expect(page.body.results[1]).toMatchObject({
        status: 'queued',
        to: ['bob@grove-mail.net', 'cid@harbor-post.org'],
        destinations: [
          { destination: 'grove-mail.net', state: 'preparing', nextAttemptAt: null },
          { destination: 'harbor-post.org', state: 'preparing', nextAttemptAt: null },
        ],
      });
      const one = await t.api('GET', '/queue/messages?destination=harbor-post.org', { key: a.key });
      expect(one.body.results).toMatchObject([{ messageId: held, nextAttemptAt: null, destinations: [{ state: 'preparing' }] }]);

      hold.release();
      await signedBody(t.daemon.store, held);
      const after = await t.api('GET', '/queue', { key: a.key });
      expect(after.body.preparing).toBe(0);
      expect(after.body.results.map((d: { preparing: number }) => d.preparing)).toEqual([0, 0]);
      expect(Date.parse(after.body.results[1].nextAttemptAt)).toBeLessThanOrEqual(Date.now());
      const due = await t.api('GET', `/queue/messages?destination=harbor-post.org`, { key: a.key });
      expect(due.body.results[0].destinations).toMatchObject([{ state: 'queued', nextAttemptAt: expect.any(String) }]);
      expect(await dueJobIds()).toEqual(expect.arrayContaining((await jobsOfMessage(held)).map((j) => j.id)));
    } finally {
      hold.restore();
    }
  });
});

describe('POST /queue/messages/{id}/retry', () => {
  it('makes the waiting jobs due now and answers the message', async () => {
    const a = await account();
    const id = await send(a, ['ann@grove-mail.net', 'bob@harbor-post.org']);
    await deferOnce(id, { code: 421, enhanced: '4.4.2', text: '421 4.4.2 Timeout' });
    const before = Date.now();
    const res = await t.api('POST', `/queue/messages/${id}/retry?destination=grove-mail.net`, { key: a.key });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ messageId: id, status: 'queued', attempts: 1, destinations: [{ destination: 'grove-mail.net', state: 'queued', attempts: 1 }] });
    expect(Date.parse(res.body.nextAttemptAt)).toBeGreaterThanOrEqual(before - 1);
    expect(Date.parse(res.body.nextAttemptAt)).toBeLessThanOrEqual(Date.now());
    const jobs = await jobsOfMessage(id);
    const due = await dueJobIds();
    // The other destination keeps its later due time.
    expect(jobs.find((j) => j.domain === 'harbor-post.org')!.dueAt > new Date(Date.now() + 3_000_000).toISOString()).toBe(true);
    expect(due).toEqual(expect.arrayContaining(jobs.map((j) => j.id)));
  });

  it('leaves a message that still waits for its signature outside the due index', async () => {
    const a = await account();
    const held = vi.spyOn(t.daemon.submission.signing, 'schedule').mockImplementation(() => {});
    let id: string;
    try {
      const res = await t.api('POST', '/send/transactional', {
        key: a.key,
        headers: { 'x-service-channel-id': a.live.channelId },
        body: { from: { email: `news@${a.live.domain}` }, to: [{ email: 'ann@grove-mail.net' }], subject: 'Held', text: 'Hi' },
      });
      id = res.body.messageId;
      const notify = vi.spyOn(t.daemon.delivery, 'notify');
      const retried = await t.api('POST', `/queue/messages/${id}/retry`, { key: a.key });
      expect(retried.status).toBe(200);
      // The answer says it: still being prepared, nothing scheduled, and the dispatcher is not woken for it.
      expect(retried.body).toMatchObject({ messageId: id, status: 'queued', nextAttemptAt: null, destinations: [{ state: 'preparing', nextAttemptAt: null }] });
      expect(notify).not.toHaveBeenCalled();
      notify.mockRestore();
      expect(await dueJobIds()).not.toContain((await jobsOfMessage(id))[0].id);
    } finally {
      held.mockRestore();
    }
  });

  it('answers 409 while an attempt is under way, and for a message with nothing queued', async () => {
    const a = await account();
    const id = await send(a, ['ann@grove-mail.net']);
    await lease((j) => j.messageId === id);
    const leased = await t.api('POST', `/queue/messages/${id}/retry`, { key: a.key });
    expect(leased.status).toBe(409);
    expect(leased.body).toMatchObject({ code: 'conflict', detail: expect.stringContaining('under way') });

    const sandbox = await setupSender(t, dns, { key: a.key, deliveryType: 'sandbox' });
    const sent = await send(a, ['bob@grove-mail.net'], sandbox);
    const none = await t.api('POST', `/queue/messages/${sent}/retry`, { key: a.key });
    expect(none.status).toBe(409);
    expect(none.body.code).toBe('conflict');
  });

  it('answers 404 for an unknown message and for a destination the message has no delivery to, 422 for a malformed id or destination', async () => {
    const a = await account();
    const id = await send(a, ['ann@grove-mail.net']);
    expect((await t.api('POST', '/queue/messages/0b7c6a4e-8d0f-4a35-9a53-0d8a1d5e2f11/retry', { key: a.key })).status).toBe(404);
    const other = await t.api('POST', `/queue/messages/${id}/retry?destination=harbor-post.org`, { key: a.key });
    expect(other.status).toBe(404);
    expect(other.body.code).toBe('not_found');
    const malformed = await t.api('POST', '/queue/messages/not-a-uuid/retry', { key: a.key });
    expect(malformed.status).toBe(422);
    expect(Object.keys(malformed.body.errors)).toEqual(['/id']);
    const badDestination = await t.api('DELETE', `/queue/messages/${id}?destination=mail..net`, { key: a.key });
    expect(badDestination.status).toBe(422);
    expect(Object.keys(badDestination.body.errors)).toEqual(['/destination']);
    expect((await jobsOfMessage(id))[0].state).toBe('queued');
  });
});

describe('DELETE /queue/messages/{id}', () => {
  it('drops the waiting jobs as the CLI does: a bounced event per recipient, and the message is sent', async () => {
    const a = await account();
    const id = await send(a, ['ann@grove-mail.net', 'bob@harbor-post.org']);
    const res = await t.api('DELETE', `/queue/messages/${id}`, { key: a.key });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ messageId: id, status: 'sent', to: [], nextAttemptAt: null });
    expect(res.body.destinations.map((d: { state: string }) => d.state)).toEqual(['done', 'done']);
    const events = await t.api('GET', `/activity/events?messageId=${id}&eventTypes=bounced`, { key: a.key });
    expect(events.body.results.map((e: { recipients: string[]; details: { reason: string } }) => [e.recipients[0], e.details.reason]).sort()).toEqual([
      ['ann@grove-mail.net', 'dropped by operator'],
      ['bob@harbor-post.org', 'dropped by operator'],
    ]);
    expect((await t.api('GET', `/activity/messages/${id}`, { key: a.key })).body.status).toBe('sent');
    expect((await t.api('GET', '/queue', { key: a.key })).body.results).toEqual([]);
    const again = await t.api('DELETE', `/queue/messages/${id}`, { key: a.key });
    expect(again.status).toBe(409);
  });

  it('drops nothing while an attempt of the message is under way (409)', async () => {
    const a = await account();
    const id = await send(a, ['ann@grove-mail.net', 'bob@harbor-post.org']);
    await lease((j) => j.messageId === id && j.domain === 'grove-mail.net');
    const res = await t.api('DELETE', `/queue/messages/${id}`, { key: a.key });
    expect(res.status).toBe(409);
    expect((await jobsOfMessage(id)).map((j) => j.state).sort()).toEqual(['leased', 'queued']);
    // The destination not being delivered can still be dropped alone.
    const one = await t.api('DELETE', `/queue/messages/${id}?destination=harbor-post.org`, { key: a.key });
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ status: 'queued', destinations: [{ destination: 'harbor-post.org', state: 'done' }] });
  });
});

describe('tenant isolation of /queue', () => {
  it("never shows or acts on another account's messages (403), and a channel key may read but not write (403)", async () => {
    const a = await account();
    const b = await account();
    const id = await send(a, ['ann@grove-mail.net']);
    expect((await t.api('GET', '/queue', { key: b.key })).body.results).toEqual([]);
    expect((await t.api('GET', '/queue/messages', { key: b.key })).body.results).toEqual([]);
    for (const [method, path] of [['POST', `/queue/messages/${id}/retry`], ['DELETE', `/queue/messages/${id}`]] as const) {
      const res = await t.api(method, path, { key: b.key });
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(res.body.code).toBe('forbidden');
    }
    const ck = await channelKey(t, a.accountId, a.live.channelId);
    expect((await t.api('GET', '/queue/messages', { key: ck })).body.results.map((m: { messageId: string }) => m.messageId)).toEqual([id]);
    const write = await t.api('POST', `/queue/messages/${id}/retry`, { key: ck });
    expect(write.status).toBe(403);
    expect(write.body.detail).toMatch(/account-level/);
    // Another channel's key of the same account does not see the message at all.
    const otherChannel = await setupSender(t, dns, { key: a.key });
    const other = await channelKey(t, a.accountId, otherChannel.channelId);
    expect((await t.api('GET', '/queue/messages', { key: other })).body.results).toEqual([]);
    expect((await t.api('DELETE', `/queue/messages/${id}`, { key: other })).status).toBe(403);
    expect((await jobsOfMessage(id))[0].state).toBe('queued');
  });
});
