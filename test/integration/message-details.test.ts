import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { DeliveryJob } from '../../src/domain/types.js';
import { startDaemonWithDns, stopDaemonWithDns, type TestDaemon } from '../support/daemon.js';
import type { TestDns } from '../support/dns-server.js';
import { newAccount } from '../support/domains.js';
import { setupSender, type Sender } from '../support/sending.js';
import { signedBody } from '../support/signing.js';
import { seedEvents } from '../support/engine-fixtures.js';

let dns: TestDns;
let t: TestDaemon;
let sandbox: Sender;
let live: Sender;

const details = (id: string, key?: string) => t.api('GET', `/activity/messages/${id}`, { key });

/** Leases the message's due jobs, as the (disabled) dispatcher would, and records a 451 for each, attempted at `at(job)`. */
async function deferOnce(messageId: string, at: (job: DeliveryJob) => Date): Promise<number> {
  const store = t.daemon.store;
  const { jobs } = await store.queue.lease({ owner: 'local', nowMs: Date.now(), max: 10, leaseMs: 60_000, accept: (j) => j.messageId === messageId });
  await store.queue.recordOutcomes(
    jobs.map((job) => ({
      job,
      attemptAt: at(job),
      result: {
        recipients: job.recipients.map((recipient) => ({ recipient, outcome: 'deferred', category: 'other', phase: 'rcpt', smtpCode: 451, enhancedCode: '4.7.1', response: '451 4.7.1 try later' })),
        mx: `mx.${job.domain}`,
        tls: true,
        response: '451 4.7.1 try later',
      },
      // Back in the queue an hour later, as the retry schedule would put it.
      nextDueAtMs: Date.now() + 3_600_000,
    })),
  );
  return jobs.length;
}

async function send(s: Sender, body: Record<string, unknown>, key?: string): Promise<string> {
  const res = await t.api('POST', '/send/transactional', {
    key,
    headers: { 'x-service-channel-id': s.channelId },
    body: { from: { email: `news@${s.domain}`, name: 'News' }, subject: 'Hello', text: 'Hi there', ...body },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  // The message as stored: composed and signed after the commit (src/submission/finishing.ts).
  await signedBody(t.daemon.store, res.body.messageId);
  return res.body.messageId;
}

beforeAll(async () => {
  ({ t, dns } = await startDaemonWithDns());
  sandbox = await setupSender(t, dns, { deliveryType: 'sandbox', tracking: { links: true, opens: false } });
  live = await setupSender(t, dns);
});

afterAll(() => stopDaemonWithDns({ t, dns }));

describe('GET /activity/messages/{id}', () => {
  it('returns the message as stored, its events, its statistics and its raw source', async () => {
    const id = await send(sandbox, {
      to: [{ email: 'ann@example.net', name: 'Ann' }, { email: 'gone@bounce.postrider.invalid' }],
      cc: [{ email: 'bob@example.org' }],
      bcc: [{ email: 'carol@example.org' }],
      replyTo: [{ email: 'help@example.com' }],
      html: '<p>Hi there</p>',
      tags: ['welcome'],
      headers: { 'X-Campaign': 'spring' },
      metadata: { user: 42 },
      attachments: [{ content: Buffer.from('hello pdf').toString('base64'), fileName: 'r.pdf' }],
    });
    await signedBody(t.daemon.store, id);
    const res = await details(id);
    expect(res.status).toBe(200);
    const b = res.body;
    expect(b).toMatchObject({
      messageId: id,
      channelId: sandbox.channelId,
      mailType: 'transactional',
      mailSource: 'api',
      deliveryType: 'sandbox',
      status: 'sent',
      subject: 'Hello',
      from: { email: `news@${sandbox.domain}`, name: 'News' },
      to: [{ email: 'ann@example.net', name: 'Ann' }, { email: 'gone@bounce.postrider.invalid' }],
      cc: [{ email: 'bob@example.org' }],
      bcc: [{ email: 'carol@example.org' }],
      replyTo: [{ email: 'help@example.com' }],
      tracking: { links: true, opens: false },
      text: 'Hi there',
      html: '<p>Hi there</p>',
      tags: ['welcome'],
      headers: { 'X-Campaign': 'spring' },
      metadata: { user: '42' },
      attachments: [{ fileName: 'r.pdf', disposition: 'attachment', size: 9 }],
      statistics: { delivered: 3, bounced: 1, opened: 0, clicked: 0, complained: 0, unsubscribed: 0 },
      attempts: [],
    });
    expect(b.timestamp).toBe((await t.daemon.store.messages.get(id))!.createdAt);
    expect(b.events.map((e: { eventType: string }) => e.eventType)).toEqual(['accepted', 'processed', 'delivered', 'bounced']);
    expect(b.events[3]).toEqual({
      eventType: 'bounced',
      timestamp: expect.any(String),
      recipients: ['gone@bounce.postrider.invalid'],
      details: expect.objectContaining({ bounceType: 'hard', smtpCode: 550 }),
    });
    expect(b.body).toBe((await t.daemon.store.messages.body(id))!.toString('utf8'));
    expect(b.body).toMatch(/^DKIM-Signature:/m);
    expect(b.body).toMatch(/^Subject: Hello/m);
    expect(b.bodyTruncated).toBeUndefined();
  });

  it('counts later engagement events into the statistics', async () => {
    const id = await send(sandbox, { to: [{ email: 'dee@example.net' }, { email: 'eve@example.net' }] });
    const m = (await t.daemon.store.messages.get(id))!;
    const base = { accountId: m.accountId, channelId: m.channelId, messageId: id, mailType: m.mailType, mailSource: m.mailSource, subject: m.subject, tags: m.tags, metadata: m.metadata };
    const at = new Date().toISOString();
    await seedEvents(t.daemon.store, [
      { ...base, eventType: 'opened', timestamp: at, recipients: ['dee@example.net'], details: {} },
      { ...base, eventType: 'opened', timestamp: at, recipients: ['dee@example.net'], details: {} },
      { ...base, eventType: 'clicked', timestamp: at, recipients: ['eve@example.net'], details: { url: 'https://example.com' } },
      { ...base, eventType: 'unsubscribed', timestamp: at, recipients: ['eve@example.net'], details: {} },
      { ...base, eventType: 'complained', timestamp: at, recipients: ['eve@example.net'], details: {} },
    ]);
    const res = await details(id);
    expect(res.body.statistics).toEqual({ delivered: 2, bounced: 0, opened: 2, clicked: 1, complained: 1, unsubscribed: 1 });
    expect(res.body.events).toHaveLength(8);
  });

  it('shows a queued live message with its delivery attempts, oldest first', async () => {
    const id = await send(live, { to: [{ email: 'ann@example.net' }, { email: 'bob@example.org' }] });
    const store = t.daemon.store;
    const jobs = await store.queue.jobsOfMessage(id);
    expect(jobs.map((j) => j.domain).sort()).toEqual(['example.net', 'example.org']);
    // One deferred attempt per job, leased and recorded as delivery records it (delivery is off in test daemons).
    await signedBody(store, id); // due once signed
    expect(await deferOnce(id, (job) => new Date(`2030-01-01T00:0${jobs.findIndex((j) => j.id === job.id)}:00.000Z`))).toBe(2);
    const res = await details(id);
    expect(res.body.status).toBe('queued');
    expect(res.body.attempts).toEqual([
      { domain: jobs[0].domain, at: '2030-01-01T00:00:00.000Z', mx: `mx.${jobs[0].domain}`, smtpCode: 451, enhancedCode: '4.7.1', response: '451 4.7.1 try later', outcome: 'deferred', tls: true },
      { domain: jobs[1].domain, at: '2030-01-01T00:01:00.000Z', mx: `mx.${jobs[1].domain}`, smtpCode: 451, enhancedCode: '4.7.1', response: '451 4.7.1 try later', outcome: 'deferred', tls: true },
    ]);
    expect(res.body.statistics.delivered).toBe(0);
  });

  it('answers 200 with what intake knew while the message waits for its composition', async () => {
    // As if the finishing stage were behind: the message is committed as its request, not composed yet.
    const held = vi.spyOn(t.daemon.submission.signing, 'schedule').mockImplementation(() => {});
    let res;
    try {
      res = await t.api('POST', '/send/transactional', {
        headers: { 'x-service-channel-id': sandbox.channelId },
        body: { from: { email: `news@${sandbox.domain}` }, to: [{ email: 'ann@example.net' }], template: { subject: 'Hi {{n}}', html: '<p>{{n}}</p>', data: { n: 'Ann' } } },
      });
    } finally {
      held.mockRestore();
    }
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const id = res.body.messageId;
    const before = await details(id);
    expect(before.status).toBe(200);
    expect(before.body).toMatchObject({ messageId: id, subject: 'Hi Ann', status: 'sent' });
    expect(before.body.body).toBeUndefined();
    expect(before.body.html).toBeUndefined();
    expect(before.body.messageHeaders).toBeUndefined();

    t.daemon.submission.signing.schedule([id]);
    await signedBody(t.daemon.store, id);
    const after = await details(id);
    expect(after.body).toMatchObject({ messageId: id, subject: 'Hi Ann', html: '<p>Ann</p>' });
    expect(after.body.body).toMatch(/^Message-ID: <[^>]+>\r?$/m);
    expect(after.body.body).toContain(`<${id}@${sandbox.domain}>`);
    // The header block of the message as stored, in order, unfolded: what a message page shows.
    const fields: Array<{ name: string; value: string }> = after.body.messageHeaders;
    expect(fields[0].name).toBe('DKIM-Signature');
    expect(fields.find((f) => f.name === 'Message-ID')?.value).toBe(`<${id}@${sandbox.domain}>`);
    expect(fields.find((f) => f.name === 'Subject')?.value).toBe('Hi Ann');
    expect(fields.every((f) => !/[\r\n]/.test(f.value))).toBe(true);
  });

  it('cuts a raw source above 1 MiB and says so', async () => {
    const big = Buffer.alloc(1_200_000, 'a').toString('base64');
    const id = await send(sandbox, { to: [{ email: 'ann@example.net' }], attachments: [{ content: big, fileName: 'big.txt' }] });
    const res = await details(id);
    expect(res.status).toBe(200);
    expect(res.body.bodyTruncated).toBe(true);
    expect(Buffer.byteLength(res.body.body)).toBeLessThanOrEqual(1024 * 1024 + 3);
    expect(res.body.attachments).toEqual([{ fileName: 'big.txt', disposition: 'attachment', size: 1_200_000 }]);
  });

  it('answers 404 for an unknown id and 422 for an id that is not a UUID', async () => {
    const unknown = await details(randomUUID());
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('not_found');
    expect((await details('not-a-uuid')).status).toBe(422);
  });

  it('answers 403 for another account\'s message and for a channel key on another channel', async () => {
    const id = await send(sandbox, { to: [{ email: 'ann@example.net' }] });
    const { key: otherKey } = await newAccount(t);
    const res = await details(id, otherKey);
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('forbidden');
    const liveKey = (await t.daemon.store.apiKeys.create({ accountId: t.accountId, channelId: live.channelId })).token;
    expect((await details(id, liveKey)).status).toBe(403);
    const sandboxKey = (await t.daemon.store.apiKeys.create({ accountId: t.accountId, channelId: sandbox.channelId })).token;
    expect((await details(id, sandboxKey)).status).toBe(200);
  });
});
