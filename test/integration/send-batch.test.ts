/**
 * POST /send/transactional/batch (api-surface.md, sending.transactionalBatch): answers in
 * request order, one bad entry fails alone, all accepted entries commit in one store write, and
 * the idempotency key covers the whole batch.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startDaemonWithDns, stopDaemonWithDns, type TestDaemon } from '../support/daemon.js';
import type { TestDns } from '../support/dns-server.js';
import { newAccount } from '../support/domains.js';
import { setupSender, type Sender } from '../support/sending.js';
import { waitFor } from '../support/wait.js';

let dns: TestDns;
let t: TestDaemon;
let s: Sender;
let sandbox: Sender;

/** What the SDK sends: the channel under its X-Helo name, a JSON body. */
const batch = (body: unknown, opts: { channel?: string; key?: string | null; headers?: Record<string, string> } = {}) =>
  t.api('POST', '/send/transactional/batch', { body, key: opts.key, headers: { 'X-Helo-Channel-Id': opts.channel ?? s.channelId, ...opts.headers } });

const msg = (to: string, extra: Record<string, unknown> = {}, sender: Sender = s) => ({
  from: { email: `news@${sender.domain}` },
  to: [{ email: to }],
  subject: `Hello ${to}`,
  text: 'Hi',
  ...extra,
});
const messageCount = () => t.daemon.store.messages.count();
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

beforeAll(async () => {
  ({ t, dns } = await startDaemonWithDns({ 'limits.pendingSendLimit': 3 }));
  s = await setupSender(t, dns);
  sandbox = await setupSender(t, dns, { deliveryType: 'sandbox' });
});

afterAll(() => stopDaemonWithDns({ t, dns }));

describe('POST /send/transactional/batch', () => {
  it('answers every entry in request order: accepted ones are stored and queued, failed ones name their code and pointers', async () => {
    const suppressed = await t.api('POST', '/suppressions', { body: { channelId: s.channelId, mailType: 'transactional', emails: ['gone@example.org'] } });
    expect(suppressed.status).toBe(200);
    const before = await messageCount();
    const res = await batch({
      requests: [
        msg('ann@example.net', { tags: ['one'], cc: [{ email: 'gone@example.org' }] }),
        { ...msg('bob@example.net'), from: { name: 'No address' }, subject: 'x'.repeat(300) },
        msg('gone@example.org'),
        msg('cid@example.net', { subject: undefined, text: undefined, template: { subject: 'x', html: '{{#if}}broken' } }),
        42,
        msg('dan@example.net', { metadata: { n: 1 } }),
      ],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const [a, bad, allSuppressed, template, notObject, d] = res.body.responses;
    expect(res.body.responses).toHaveLength(6);
    expect(a).toEqual({ status: 'accepted', messageId: expect.stringMatching(UUID), suppressions: ['gone@example.org'] });
    expect(d).toEqual({ status: 'accepted', messageId: expect.stringMatching(UUID), suppressions: [] });
    expect(bad).toEqual({ status: 'failed', errorCode: 'validation_failed', errorMessage: expect.stringContaining('/requests/1/subject') });
    expect(bad.errorMessage).toMatch(/\/requests\/1\/from\/email \(/);
    expect(allSuppressed).toEqual({ status: 'failed', errorCode: 'recipients_suppressed', errorMessage: expect.stringContaining('gone@example.org') });
    expect(template).toEqual({ status: 'failed', errorCode: 'templating_error', errorMessage: expect.stringContaining('/requests/3/template/html') });
    expect(notObject).toEqual({ status: 'failed', errorCode: 'validation_failed', errorMessage: expect.stringContaining('/requests/4 (must be an object)') });

    expect(await messageCount()).toBe(before + 2);
    expect((await t.daemon.store.messages.get(a.messageId))).toMatchObject({ mailType: 'transactional', status: 'queued', channelId: s.channelId, tags: ['one'], recipients: ['ann@example.net'] });
    expect((await t.daemon.store.messages.get(d.messageId))).toMatchObject({ subject: 'Hello dan@example.net', metadata: { n: '1' } });
    expect((await t.daemon.store.events.ofMessage(a.messageId)).map((e) => e.eventType)).toEqual(['accepted', 'processed']);
  });

  it('commits all accepted entries in one submission commit', async () => {
    // A sandbox channel queues no delivery jobs, so no dispatcher write can interleave here.
    // The DKIM signatures are stored after the commit, in the signing stage's own writes: those
    // of the earlier tests are let finish, this test's held, so that only the commit is counted.
    await waitFor(async () => (await t.daemon.submission.signing.backlog()) === 0, { what: 'the earlier messages signed' });
    const hold = vi.spyOn(t.daemon.submission.signing, 'schedule').mockImplementation(() => {});
    // The port's one atomic verb for a submission (store/port/messages.ts), whatever the engine.
    const write = vi.spyOn(t.daemon.store.messages, 'commit');
    try {
      const res = await batch({ requests: [1, 2, 3, 4, 5].map((i) => msg(`r${i}@example.net`, {}, sandbox)) }, { channel: sandbox.channelId });
      expect(res.status).toBe(200);
      expect(res.body.responses.map((r: { status: string }) => r.status)).toEqual(Array(5).fill('accepted'));
      expect(write).toHaveBeenCalledTimes(1);
    } finally {
      write.mockRestore();
      hold.mockRestore();
    }
  });

  it('answers a batch whose every entry fails with 200 and stores nothing', async () => {
    const before = await messageCount();
    const res = await batch({ requests: [{}, msg('x@example.net', { to: 'nobody' }), msg('y@example.net', { from: { email: 'not-an-address' } })] });
    expect(res.status).toBe(200);
    expect(res.body.responses).toEqual([
      { status: 'failed', errorCode: 'validation_failed', errorMessage: expect.stringMatching(/\/requests\/0\/from .*\/requests\/0\/to/) },
      { status: 'failed', errorCode: 'validation_failed', errorMessage: expect.stringContaining('/requests/1/to (must be an array)') },
      // Found by the address rules after the schema: pointed into the batch body the same way.
      { status: 'failed', errorCode: 'validation_failed', errorMessage: expect.stringContaining('/requests/2/from/email (') },
    ]);
    expect(await messageCount()).toBe(before);
  });

  it('names an entry\'s schema errors and its unlinked from domain together, and answers an unverified domain alone with domain_unverified (issue 30 item 8)', async () => {
    const NOT_LINKED = '/from/email (unlinked-domain.com must be a domain of the account linked to the channel)';
    const res = await batch({
      requests: [
        msg('a@example.net', { from: { email: 'news@unlinked-domain.com' }, subject: 'x'.repeat(300) }),
        msg('b@example.net', { from: { email: 'news@unlinked-domain.com' }, cc: Array.from({ length: 50 }, (_, i) => ({ email: `c${i}@example.net` })) }),
        msg('c@example.net', { from: { email: 'news@unlinked-domain.com' } }),
        msg('d@example.net', { subject: 'x'.repeat(300) }),
      ],
    });
    const [schema, afterSchema, alone, linked] = res.body.responses;
    expect(schema).toEqual({ status: 'failed', errorCode: 'validation_failed', errorMessage: expect.stringContaining('/requests/0/subject (') });
    expect(schema.errorMessage).toContain(`/requests/0${NOT_LINKED}`);
    expect(afterSchema.errorMessage).toContain('/requests/1/to (');
    expect(afterSchema.errorMessage).toContain(`/requests/1${NOT_LINKED}`);
    expect(alone).toEqual({ status: 'failed', errorCode: 'validation_failed', errorMessage: expect.stringContaining(`/requests/2${NOT_LINKED}`) });
    expect(linked.errorMessage).not.toContain('/from/email');
    const addresses = await batch({ requests: [msg('broken', { subject: 'x'.repeat(300) })] });
    expect(addresses.body.responses[0].errorMessage).toMatch(/\/requests\/0\/subject \(.*\/requests\/0\/to\/0\/email \(/);

    const unverified = await setupSender(t, dns, { verify: false });
    const other = await batch({ requests: [msg('e@example.net', { subject: 'x'.repeat(300) }, unverified), msg('f@example.net', {}, unverified)] }, { channel: unverified.channelId });
    const [listed, only] = other.body.responses;
    expect(listed).toEqual({ status: 'failed', errorCode: 'validation_failed', errorMessage: expect.stringContaining(`/requests/0/from/email (${unverified.domain} is not verified;`) });
    expect(only).toEqual({ status: 'failed', errorCode: 'domain_unverified', errorMessage: expect.stringContaining(`${unverified.domain} is not verified`) });
  });

  it('answers 422 on /requests for an empty list, more than 500 requests, or no list, reporting every top-level problem together', async () => {
    const empty = await batch({ requests: [] });
    expect(empty.status).toBe(422);
    expect(empty.body.errors).toEqual({ '/requests': [expect.objectContaining({ code: 'min_items' })] });
    const tooMany = await batch({ requests: Array.from({ length: 501 }, (_, i) => msg(`m${i}@example.net`)) });
    expect(tooMany.status).toBe(422);
    expect(tooMany.body.errors).toEqual({ '/requests': [expect.objectContaining({ code: 'max_items' })] });
    const none = await batch({ messages: [] });
    expect(none.status).toBe(422);
    expect(Object.keys(none.body.errors).sort()).toEqual(['/messages', '/requests']);
    const notArray = await batch({ requests: msg('a@example.net') });
    expect(notArray.body.errors).toEqual({ '/requests': [expect.objectContaining({ code: 'invalid_type' })] });
    const broken = await t.api('POST', '/send/transactional/batch', { rawBody: '{"requests": [', headers: { 'X-Helo-Channel-Id': s.channelId } });
    expect(broken.status).toBe(400);
    expect(broken.body.code).toBe('invalid_json');
  });

  it('accepts exactly 500 requests', async () => {
    const res = await batch({ requests: Array.from({ length: 500 }, (_, i) => msg(`n${i}@example.net`, {}, sandbox)) }, { channel: sandbox.channelId });
    expect(res.status).toBe(200);
    expect(res.body.responses).toHaveLength(500);
    expect(res.body.responses.every((r: { status: string }) => r.status === 'accepted')).toBe(true);
  });
});

describe('batch idempotency', () => {
  it('replays the same responses for the same key and body and sends nothing more', async () => {
    const headers = { 'X-Helo-Idempotency-Key': `batch-${Date.now()}` };
    const body = { requests: [msg('p@example.net'), { nonsense: true }, msg('q@example.net')] };
    const first = await batch(body, { headers });
    const before = await messageCount();
    const second = await batch(body, { headers });
    expect(second.status).toBe(200);
    expect(second.body).toEqual(first.body);
    expect(await messageCount()).toBe(before);
  });

  it('refuses the same key with a different batch (422 on /Idempotency-Key), also when only a failed entry changed', async () => {
    const headers = { 'Idempotency-Key': `batch-d-${Date.now()}` };
    await batch({ requests: [msg('p@example.net'), { nonsense: 1 }] }, { headers });
    const res = await batch({ requests: [msg('p@example.net'), { nonsense: 2 }] }, { headers });
    expect(res.status).toBe(422);
    expect(res.body.errors['/Idempotency-Key'][0].code).toBe('conflict');
  });

  it('keeps a batch key apart from the same key on the single send route', async () => {
    const headers = { 'Idempotency-Key': `batch-s-${Date.now()}` };
    expect((await batch({ requests: [msg('p@example.net')] }, { headers })).status).toBe(200);
    const single = await t.api('POST', '/send/transactional', { body: msg('p@example.net'), headers: { 'X-Helo-Channel-Id': s.channelId, ...headers } });
    expect(single.status).toBe(422);
    expect(single.body.errors['/Idempotency-Key'][0].code).toBe('conflict');
  });
});

describe('batch failures of the whole request', () => {
  it('answers 401 without a valid key', async () => {
    expect((await batch({ requests: [msg('a@example.net')] }, { key: null })).status).toBe(401);
    expect((await batch({ requests: [msg('a@example.net')] }, { key: 'pr_nonsense' })).status).toBe(401);
  });

  it('answers 403 for another account\'s channel and 404 for an unknown one, sending nothing', async () => {
    const before = await messageCount();
    const { key: token } = await newAccount(t);
    const forbidden = await batch({ requests: [msg('a@example.net')] }, { key: token });
    expect(forbidden.status).toBe(403);
    const missing = await batch({ requests: [msg('a@example.net')] }, { channel: '00000000-0000-4000-8000-000000000000' });
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe('channel_not_found');
    expect(await messageCount()).toBe(before);
  });

  it('answers 403 send_limit_exceeded when the accepted entries together exceed a pending account\'s quota, sending none of them', async () => {
    const { key: token } = await newAccount(t, { state: 'pending' });
    const own = await setupSender(t, dns, { key: token });
    const two = await batch({ requests: [msg('a@example.net', {}, own), msg('b@example.net', {}, own)] }, { key: token, channel: own.channelId });
    expect(two.body.responses.map((r: { status: string }) => r.status)).toEqual(['accepted', 'accepted']);
    const before = await messageCount();
    const over = await batch({ requests: [msg('c@example.net', {}, own), msg('d@example.net', {}, own)] }, { key: token, channel: own.channelId });
    expect(over.status).toBe(403);
    expect(over.body.code).toBe('send_limit_exceeded');
    expect(await messageCount()).toBe(before);
  });

  it('answers 403 account_forbidden for a suspended account', async () => {
    const { accountId, key: token } = await newAccount(t);
    const own = await setupSender(t, dns, { key: token });
    await t.daemon.store.accounts.setState(accountId, 'suspended');
    const res = await batch({ requests: [msg('a@example.net', {}, own)] }, { key: token, channel: own.channelId });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('account_forbidden');
  });
});
