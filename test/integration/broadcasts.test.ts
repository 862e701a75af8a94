import { simpleParser } from 'mailparser';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { sameForAll } from '../../src/domain/delivery-result.js';
import type { DeliveryJob, EventRecord, MessageRecord } from '../../src/domain/types.js';
import { BroadcastExpander } from '../../src/submission/broadcast-expander.js';
import type { SubmissionDeps } from '../../src/submission/deps.js';
import type { FinishRequest, FinishResult, MessageBuilder } from '../../src/submission/ports.js';
import { TaskError } from '../../src/workers/errors.js';
import { newAccount } from '../support/domains.js';
import { signedBody } from '../support/signing.js';
import { startDaemonWithDns, stopDaemonWithDns, type TestDaemon } from '../support/daemon.js';
import { dueJobIds, silentLogger } from '../support/delivery.js';
import type { TestDns } from '../support/dns-server.js';
import { FakeClock } from '../support/fake-clock.js';
import { setupSender, type Sender } from '../support/sending.js';
import { waitFor } from '../support/wait.js';
import { putBroadcastAsOlderVersion } from '../support/engine-fixtures.js';
import { TEST_STORE_ENGINE } from '../support/store.js';

let dns: TestDns;
let t: TestDaemon;
/** Live channel (delivery is off in test daemons: messages stay queued until a test leases them). */
let live: Sender;
let sandbox: Sender;
let otherKey: string;
let realBuilder: MessageBuilder;
let realFinish: MessageBuilder['finish'];
let realDomains: SubmissionDeps['domains'];

const PUBLIC = 'https://links.postrider-test.net';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function send(s: Sender, body: Record<string, unknown>) {
  return t.api('POST', '/send/broadcast', {
    body: { from: { email: `promo@${s.domain}`, name: 'Promo' }, template: { subject: 'Hi {{name}}', text: 'Hello {{name}}' }, ...body },
    headers: { 'x-service-channel-id': s.channelId },
  });
}

function entries(n: number, prefix = 'user'): Array<{ to: { email: string }[]; data: { name: string } }> {
  return Array.from({ length: n }, (_, i) => ({ to: [{ email: `${prefix}${i}@example.net` }], data: { name: `n${i}` } }));
}

async function messagesOf(broadcastId: string): Promise<MessageRecord[]> {
  return (await t.daemon.store.messages.all()).filter((m) => m.broadcastId === broadcastId);
}

async function jobsOf(messageId: string): Promise<DeliveryJob[]> {
  return (await t.daemon.store.queue.jobsOfMessage(messageId));
}

/** Fetches a tracking link of a built message (pixel or click) from the test daemon, as a mail client would. */
async function follow(publicLink: string): Promise<number> {
  const u = new URL(publicLink.replace(/&amp;/g, '&'));
  expect(u.origin).toBe(PUBLIC);
  return (await fetch(`${t.url}${u.pathname}${u.search}`, { redirect: 'manual' })).status;
}

/**
 * Makes the pool's finish task (the finishing stage composes through it after the commit) fail
 * for the messages `fails` picks, as a template that cannot render with their data does: an
 * input error, the same on every try. Undone after each test.
 */
function failComposition(fails: (r: FinishRequest) => boolean): void {
  const real = realFinish;
  realBuilder.finish = async (inputs) => {
    const settled = await real.call(realBuilder, inputs);
    return settled.map((r, i): PromiseSettledResult<FinishResult> => {
      if (!fails(inputs[i]!)) return r;
      return { status: 'rejected', reason: new TaskError('templating_error', 'renderer crashed') };
    });
  };
}

beforeAll(async () => {
  ({ t, dns } = await startDaemonWithDns({ publicUrl: PUBLIC }));
  live = await setupSender(t, dns);
  sandbox = await setupSender(t, dns, { deliveryType: 'sandbox', tracking: { opens: true, links: true } });
  realBuilder = t.daemon.submission.deps.builder;
  realFinish = realBuilder.finish;
  realDomains = t.daemon.submission.deps.domains;
  ({ key: otherKey } = await newAccount(t));
});

afterEach(async () => {
  realBuilder.finish = realFinish;
  t.daemon.submission.deps.domains = realDomains;
  await t.daemon.submission.expander.start();
  await t.daemon.submission.expander.drain();
});

afterAll(() => stopDaemonWithDns({ t, dns }));

describe('GET /broadcasts/{id}', () => {
  it('returns content, tracking, counters and per-broadcast statistics kept as events happen', async () => {
    await t.api('POST', '/suppressions', { body: { channelId: sandbox.channelId, mailType: 'broadcast', emails: ['gone@example.net'] } });
    const res = await send(sandbox, {
      replyTo: [{ email: `help@${sandbox.domain}` }],
      template: { subject: 'Spring {{name}}', html: '<p>Hi {{name}} <a href="https://shop.example.org/spring">shop</a></p>', text: 'Hi {{name}}' },
      attachments: [{ content: Buffer.from('hello').toString('base64'), fileName: 'a.txt', contentType: 'text/plain' }],
      tags: ['spring'],
      headers: { 'X-Campaign': 'c1' },
      metadata: { campaign: 'c1' },
      messages: [
        { to: [{ email: 'ann@example.net' }], data: { name: 'Ann' } },
        // Sandbox: the reserved domain bounces (simulated hard bounce).
        { to: [{ email: 'x@bounce.postrider.invalid' }], data: { name: 'X' } },
        { to: [{ email: 'gone@example.net' }], data: { name: 'Gone' } },
        { to: [{ email: 'bob@example.net' }], cc: [{ email: 'gone@example.net' }], data: { name: 'Bob' } },
      ],
    });
    expect(res.status).toBe(200);
    const id = res.body.broadcastId;
    await t.daemon.submission.expander.drain();
    // Ann opens her message and clicks its link (the tracking endpoints append the events).
    const ann = (await messagesOf(id)).find((m) => m.recipients[0] === 'ann@example.net')!;
    const html = String((await simpleParser(await signedBody(t.daemon.store, ann.id))).html);
    expect(await follow(/<img src="([^"]+)"/.exec(html)![1])).toBe(200);
    expect(await follow(/href="([^"]+)"/.exec(html)![1])).toBe(302);

    const got = await t.api('GET', `/broadcasts/${id}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual({
      id,
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      status: 'completed',
      subject: 'Spring {{name}}',
      completion: '100%',
      messages: 4,
      failed: 1,
      suppressed: 1,
      canceled: 0,
      content: {
        from: { email: `promo@${sandbox.domain}`, name: 'Promo' },
        replyTo: [{ email: `help@${sandbox.domain}` }],
        template: { subject: 'Spring {{name}}', html: '<p>Hi {{name}} <a href="https://shop.example.org/spring">shop</a></p>', text: 'Hi {{name}}' },
        attachments: [{ fileName: 'a.txt', disposition: 'attachment', size: 5 }],
        tags: ['spring'],
        headers: { 'X-Campaign': 'c1' },
        metadata: { campaign: 'c1' },
      },
      tracking: { opens: true, links: true },
      // sent: recipients of processed events (gone@ is left out of Bob's message).
      statistics: { sent: 3, delivered: 2, bounced: 1, opened: 1, clicked: 1, complained: 0, unsubscribed: 0 },
    });

    const failures = await t.api('GET', `/broadcasts/${id}/failures`);
    expect(failures.status).toBe(200);
    expect(failures.body).toEqual({
      totalCount: 1,
      results: [{ recipients: { to: [{ email: 'gone@example.net' }], cc: [], bcc: [] }, messageIndex: 2, errorCode: 'recipients_suppressed', errorMessage: expect.any(String) }],
    });
    const suppressions = await t.api('GET', `/broadcasts/${id}/suppressions`);
    expect(suppressions.body).toEqual({ totalCount: 1, results: ['gone@example.net'] });
  });

  it('answers 401 without a key, 403 for another account, 404 for unknown ids, 422 for malformed ones', async () => {
    const res = await send(sandbox, { messages: entries(1) });
    const id = res.body.broadcastId;
    for (const path of [`/broadcasts/${id}`, `/broadcasts/${id}/failures`, `/broadcasts/${id}/suppressions`]) {
      expect((await t.api('GET', path, { key: null })).status).toBe(401);
      const forbidden = await t.api('GET', path, { key: otherKey });
      expect(forbidden.status).toBe(403);
      expect(forbidden.body.code).toBe('forbidden');
    }
    expect((await t.api('POST', `/broadcasts/${id}/cancel`, { key: otherKey })).status).toBe(403);
    const unknown = await t.api('GET', '/broadcasts/00000000-0000-4000-8000-000000000000');
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect((await t.api('GET', '/broadcasts/not-a-uuid/failures')).status).toBe(422);
    expect((await t.api('POST', '/broadcasts/00000000-0000-4000-8000-000000000000/cancel')).status).toBe(404);
  });
});

describe('GET /broadcasts', () => {
  it('lists a channel\'s broadcasts newest first, filtered by status and subject, with paging', async () => {
    const ch = await setupSender(t, dns, { deliveryType: 'sandbox' });
    const a = (await send(ch, { template: { subject: 'Weekly NEWS', text: 't' }, messages: entries(2) })).body.broadcastId;
    const b = (await send(ch, { template: { subject: 'Offer', text: 't' }, messages: entries(1) })).body.broadcastId;
    await t.daemon.submission.expander.drain();
    await t.daemon.submission.expander.stop();
    const c = (await send(ch, { template: { subject: 'More news', text: 't' }, messages: entries(3) })).body.broadcastId;

    const all = await t.api('GET', `/broadcasts?channelId=${ch.channelId}`);
    expect(all.status).toBe(200);
    expect(all.body.totalCount).toBe(3);
    expect(all.body.results).toEqual([
      { id: c, createdAt: expect.any(String), status: 'accepted', subject: 'More news', completion: '0%', messages: 3 },
      { id: b, createdAt: expect.any(String), status: 'completed', subject: 'Offer', completion: '100%', messages: 1 },
      { id: a, createdAt: expect.any(String), status: 'completed', subject: 'Weekly NEWS', completion: '100%', messages: 2 },
    ]);
    const news = await t.api('GET', `/broadcasts?channelId=${ch.channelId}&subject=news&status=completed`);
    expect(news.body).toEqual({ totalCount: 1, results: [expect.objectContaining({ id: a })] });
    const paged = await t.api('GET', `/broadcasts?channelId=${ch.channelId}&limit=1&offset=1`);
    expect(paged.body).toEqual({ totalCount: 3, results: [expect.objectContaining({ id: b })] });
  });

  it('reports every bad query parameter together, and checks the channel\'s owner', async () => {
    const res = await t.api('GET', '/broadcasts?status=sent&limit=0&offset=-1');
    expect(res.status).toBe(422);
    expect(res.body.code).toBe('validation_failed');
    expect(Object.keys(res.body.errors).sort()).toEqual(['/channelId', '/limit', '/offset', '/status']);
    const malformed = await t.api('GET', '/broadcasts?channelId=nope');
    expect(Object.keys(malformed.body.errors)).toEqual(['/channelId']);
    expect((await t.api('GET', `/broadcasts?channelId=${live.channelId}`, { key: otherKey })).status).toBe(403);
    expect((await t.api('GET', '/broadcasts?channelId=00000000-0000-4000-8000-000000000000')).status).toBe(404);
    expect((await t.api('GET', `/broadcasts?channelId=${live.channelId}`, { key: null })).status).toBe(401);
    const failuresPaging = await t.api('GET', '/broadcasts/00000000-0000-4000-8000-000000000000/failures?limit=501');
    expect(Object.keys(failuresPaging.body.errors)).toEqual(['/limit']);
  });
});

describe('broadcast lifecycle and cancel', () => {
  it('goes accepted → processing → canceled; queued messages leave the queue without a bounce or suppression', async () => {
    await t.daemon.submission.expander.stop();
    const id = (await send(live, { messages: entries(3, 'life') })).body.broadcastId;
    expect((await t.api('GET', `/broadcasts/${id}`)).body).toMatchObject({ status: 'accepted', completion: '0%' });

    await t.daemon.submission.expander.start();
    await t.daemon.submission.expander.drain();
    // Their jobs are due once the messages are signed (after the commit, src/submission/finishing.ts).
    await waitFor(async () => (await t.daemon.submission.signing.backlog()) === 0, { what: 'the broadcast messages signed' });
    // Expanded, but the messages wait in the queue (delivery is off): processing, nothing handled.
    expect((await t.api('GET', `/broadcasts/${id}`)).body).toMatchObject({ status: 'processing', completion: '0%', statistics: { sent: 3, delivered: 0 } });
    const msgs = await messagesOf(id);
    expect(msgs).toHaveLength(3);

    // One message is in flight: the dispatcher leased its job before the cancel.
    const inFlight = msgs[0];
    const leased = await t.daemon.store.queue.lease({ owner: 'local', nowMs: Date.now(), max: 1, leaseMs: 60_000, accept: (j) => j.messageId === inFlight.id });
    expect(leased.jobs).toHaveLength(1);

    const canceled = await t.api('POST', `/broadcasts/${id}/cancel`);
    expect(canceled.status).toBe(200);
    expect(canceled.body).toMatchObject({ id, status: 'canceled', messages: 3, canceled: 2, completion: '66%' });
    for (const m of msgs.slice(1)) {
      expect(await jobsOf(m.id)).toEqual([expect.objectContaining({ state: 'done', attempts: 0, canceledAt: expect.any(String) })]);
      expect(await dueJobIds(t.daemon.store)).toHaveLength(0);
      // Canceled as a message's cancel does it (Scheduled sends): one canceled event, shown canceled.
      expect((await t.daemon.store.events.ofMessage(m.id)).map((e: EventRecord) => e.eventType)).toEqual(['accepted', 'processed', 'canceled']);
      expect((await t.api('GET', `/activity/messages/${m.id}`)).body.status).toBe('canceled');
      expect((await t.daemon.store.suppressions.is(live.channelId, 'broadcast', m.recipients[0]))).toBe(false);
    }

    // The leased job finishes normally and is counted.
    const [outcome] = await t.daemon.store.queue.recordOutcomes([
      {
        job: leased.jobs[0],
        result: sameForAll(leased.jobs[0].recipients, { outcome: 'delivered', category: 'other', phase: 'data', smtpCode: 250, response: '250 2.0.0 OK' }, { mx: 'mx.example.net' }),
        attemptAt: new Date(),
      },
    ]);
    expect(outcome.status).toBe('done');
    const after = await t.api('GET', `/broadcasts/${id}`);
    expect(after.body).toMatchObject({ status: 'canceled', completion: '100%', statistics: { sent: 3, delivered: 1, bounced: 0 } });

    // Canceling again changes nothing.
    const again = await t.api('POST', `/broadcasts/${id}/cancel`);
    expect(again.status).toBe(200);
    expect(again.body.status).toBe('canceled');
  });

  it('never sends entries that were not expanded when the cancel came, even mid-batch', async () => {
    await t.daemon.submission.expander.stop();
    const id = (await send(live, { messages: entries(250, 'mid') })).body.broadcastId;
    // The signing key is looked up once per batch, when it is prepared: the second batch is
    // prepared while the first one commits, and the cancel comes then.
    let batches = 0;
    let canceled: ReturnType<typeof t.daemon.store.broadcasts.cancel> | undefined;
    t.daemon.submission.deps.domains = {
      findSendingDomain: (q) => realDomains.findSendingDomain(q),
      signingKey: (q) => {
        if (++batches === 2) canceled = t.daemon.store.broadcasts.cancel(id, new Date());
        return realDomains.signingKey(q);
      },
    };
    await t.daemon.submission.expander.start();
    await t.daemon.submission.expander.drain();
    expect(await canceled).toMatchObject({ status: 'canceled' });

    const msgs = await messagesOf(id);
    // Only the first batch may have become messages, and none of them is queued any more.
    expect(msgs.length).toBeLessThanOrEqual(100);
    expect(msgs.every((m) => Number(/^mid(\d+)@/.exec(m.recipients[0])![1]) < 100)).toBe(true);
    expect((await Promise.all(msgs.map((m) => jobsOf(m.id)))).flat().every((j) => j.state === 'done' && j.canceledAt)).toBe(true);
    expect((await t.daemon.store.broadcasts.entries(id, 0, Number.MAX_SAFE_INTEGER)).length).toBe(0);
    expect((await t.api('GET', `/broadcasts/${id}`)).body).toMatchObject({ status: 'canceled', messages: 250 });
  });

  it('answers 409 conflict with a problem body for a completed broadcast', async () => {
    const id = (await send(sandbox, { messages: entries(2, 'done') })).body.broadcastId;
    await t.daemon.submission.expander.drain();
    const res = await t.api('POST', `/broadcasts/${id}/cancel`);
    expect(res.status).toBe(409);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(res.body).toMatchObject({ status: 409, code: 'conflict', instance: `POST /broadcasts/${id}/cancel`, requestId: expect.stringMatching(UUID) });
  });
});

describe('entries that cannot be built, and expansions that fail', () => {
  it('keeps every failed entry as a durable, listable failure (no cap), paged', async () => {
    failComposition((r) => r.build?.compose.to[0]?.email.startsWith('bad') === true);
    const messages = [...entries(1, 'good'), ...entries(150, 'bad')];
    const res = await send(sandbox, { messages });
    expect(res.status).toBe(200);
    await t.daemon.submission.expander.drain();
    const id = res.body.broadcastId;
    // Composed after the commit: the bad ones fail there, a few times a few seconds apart
    // (src/submission/finishing.ts), then end, each with its entry's failure row in the same write.
    await waitFor(async () => (await Promise.all((await messagesOf(id)).map((m) => t.daemon.store.messages.isUnfinished(m.id)))).every((u) => !u), { what: 'every message finished or ended', timeout: 20_000 });
    expect((await t.api('GET', `/broadcasts/${id}`)).body).toMatchObject({ status: 'completed', completion: '100%', messages: 151, failed: 150 });
    const page = await t.api('GET', `/broadcasts/${id}/failures?limit=2&offset=148`);
    expect(page.body).toEqual({
      totalCount: 150,
      results: [
        // Entry 0 is the good one: the 149th and 150th failures are entries 149 and 150.
        { recipients: { to: [{ email: 'bad148@example.net' }], cc: [], bcc: [] }, messageIndex: 149, errorCode: 'templating_error', errorMessage: 'renderer crashed' },
        { recipients: { to: [{ email: 'bad149@example.net' }], cc: [], bcc: [] }, messageIndex: 150, errorCode: 'templating_error', errorMessage: 'renderer crashed' },
      ],
    });
    // Every entry is committed as a message before it is composed (the expansion builds nothing):
    // 151 messages, of which the 150 that could not be composed ended as bounced, without a
    // suppression, as a transactional send does (compose-failure.test.ts). Before composition
    // moved after the commit, only the good entry became a message.
    const msgs = await messagesOf(id);
    expect(msgs).toHaveLength(151);
    const events = await Promise.all(msgs.map((m) => t.daemon.store.events.ofMessage(m.id)));
    const ended = msgs.filter((_, i) => events[i]!.some((e) => e.eventType === 'bounced' && e.details.category === 'other'));
    expect(ended.map((m) => m.recipients[0]).sort()).toEqual(entries(150, 'bad').map((e) => e.to[0].email).sort());
    expect(await t.daemon.store.suppressions.is(sandbox.channelId, 'broadcast', 'bad0@example.net')).toBe(false);
  });

  it('retries a failed expansion on a timer, without a restart or another broadcast', async () => {
    await t.daemon.submission.expander.stop();
    const real = t.daemon.submission.deps.domains;
    let failures = 1;
    const clock = new FakeClock(Date.now());
    const expander = new BroadcastExpander(
      {
        ...t.daemon.submission.deps,
        domains: {
          findSendingDomain: (q) => real.findSendingDomain(q),
          signingKey: (q) => {
            if (failures-- > 0) throw new Error('DKIM key unreadable');
            return real.signingKey(q);
          },
        },
      },
      silentLogger(),
      { clock, retryMs: 30_000 },
    );
    const id = (await send(sandbox, { messages: entries(2, 'retry') })).body.broadcastId;
    await expander.start();
    // The first expansion fails and plans its retry on the (fake) clock.
    expect(await waitFor(() => clock.nextTimerAt(), { what: 'the retry timer' })).toBe(clock.now() + 30_000);
    expect((await t.api('GET', `/broadcasts/${id}`)).body.status).toBe('accepted');
    clock.advance(30_000);
    await waitFor(async () => (await messagesOf(id)).length === 2, { what: 'the retried expansion' });
    await expander.stop();
    expect((await t.api('GET', `/broadcasts/${id}`)).body).toMatchObject({ status: 'completed', completion: '100%' });
  });
});

describe('broadcasts accepted by an older version', () => {
  // Only LMDB stores have older versions: the PostgreSQL engine started with today's records.
  it.skipIf(TEST_STORE_ENGINE !== 'lmdb')('are listed after a restart and read as completed once expanded', async () => {
    // A record as 0.1 wrote it (no channel index entry, failures kept in the record, no counters).
    const id = '11111111-1111-4111-8111-111111111111';
    const createdAt = '2025-01-06T09:00:00.000Z';
    await t.daemon.stop();
    await putBroadcastAsOlderVersion(t.dataDir, {
      id,
      accountId: t.accountId,
      channelId: live.channelId,
      createdAt,
      state: 'done',
      total: 2,
      cursor: 2,
      messages: 2,
      skipped: 0,
      failures: [],
      common: { from: { email: `promo@${live.domain}` }, replyTo: [], template: { subject: 'Old news', text: 't' }, attachments: [], tracking: { opens: false, links: false }, deliveryType: 'live' },
    });
    await t.restart();
    realBuilder = t.daemon.submission.deps.builder;
    const list = await t.api('GET', `/broadcasts?channelId=${live.channelId}&subject=old`);
    expect(list.body).toEqual({ totalCount: 1, results: [{ id, createdAt, status: 'completed', subject: 'Old news', completion: '100%', messages: 2 }] });
    expect((await t.api('GET', `/broadcasts/${id}`)).body).toMatchObject({ status: 'completed', failed: 0, suppressed: 0, content: { tags: [], headers: {}, metadata: {} } });
  });
});
