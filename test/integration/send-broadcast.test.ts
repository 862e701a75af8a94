import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type { MessageRecord } from '../../src/domain/types.js';
import { startDaemonWithDns, stopDaemonWithDns, type TestDaemon } from '../support/daemon.js';
import type { TestDns } from '../support/dns-server.js';
import { holdFinishing } from '../support/hold-finishing.js';
import { setupSender, type Sender } from '../support/sending.js';
import { signedBody } from '../support/signing.js';

let dns: TestDns;
let t: TestDaemon;
let s: Sender;

const broadcast = (body: unknown, headers: Record<string, string> = {}) =>
  t.api('POST', '/send/broadcast', { body, headers: { 'x-service-channel-id': s.channelId, ...headers } });

async function messagesOf(broadcastId: string): Promise<MessageRecord[]> {
  return (await t.daemon.store.messages.all()).filter((m) => m.broadcastId === broadcastId);
}

beforeAll(async () => {
  ({ t, dns } = await startDaemonWithDns());
  s = await setupSender(t, dns);
});

afterAll(() => stopDaemonWithDns({ t, dns }));

describe('POST /send/broadcast', () => {
  it('accepts a broadcast and turns each entry into its own message with merged data, tags and metadata', async () => {
    // Composition after the commit is held until the committed records were read: a fast
    // finishing stage (or a slower store's read) would otherwise have composed them already.
    const hold = holdFinishing(t.daemon.pool);
    onTestFinished(() => hold.restore());
    const res = await broadcast({
      from: { email: `promo@${s.domain}` },
      template: { subject: 'Hi {{name}}', html: '<p>{{greeting}} {{name}}</p>', data: { greeting: 'Hello' } },
      tags: ['spring'],
      metadata: { campaign: 'c1' },
      messages: [
        { to: [{ email: 'ann@example.net' }], data: { name: 'Ann' }, tags: ['vip'] },
        { to: [{ email: 'bob@example.net' }], data: { name: 'Bob', greeting: 'Yo' }, metadata: { segment: 'b' } },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'accepted', broadcastId: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    await t.daemon.submission.expander.drain();
    // Committed as requests: the subject is rendered at the commit, the html once composed after it.
    const committed = await messagesOf(res.body.broadcastId);
    expect(committed.map((m) => m.html)).toEqual([undefined, undefined]);
    hold.release();
    for (const m of committed) await signedBody(t.daemon.store, m.id);
    const msgs = (await messagesOf(res.body.broadcastId)).sort((a, b) => a.subject.localeCompare(b.subject));
    expect(msgs.map((m) => [m.subject, m.html, m.tags, m.metadata, m.mailType])).toEqual([
      ['Hi Ann', '<p>Hello Ann</p>', ['spring', 'vip'], { campaign: 'c1' }, 'broadcast'],
      ['Hi Bob', '<p>Yo Bob</p>', ['spring'], { campaign: 'c1', segment: 'b' }, 'broadcast'],
    ]);
    expect(new Set(msgs.map((m) => m.id)).size).toBe(2);
    expect((await t.daemon.store.broadcasts.get(res.body.broadcastId))).toMatchObject({ state: 'done', messages: 2, skipped: 0 });
  });

  it('reports problems of entries with pointers into the messages array', async () => {
    const res = await broadcast({
      from: { email: `promo@${s.domain}` },
      template: { subject: 's', text: 't' },
      messages: [{ to: [{ email: 'ok@example.net' }] }, { to: [{ email: 'broken' }] }, {}],
    });
    expect(res.status).toBe(422);
    expect(Object.keys(res.body.errors).sort()).toEqual(['/messages/1/to/0/email', '/messages/2/to']);
  });

  it('requires a template with html or text and at least one message', async () => {
    const res = await broadcast({ from: { email: `promo@${s.domain}` }, template: { subject: 's' }, messages: [] });
    expect(res.status).toBe(422);
    expect(Object.keys(res.body.errors).sort()).toEqual(['/messages', '/template/html']);
  });

  it('answers 422 templating_error before accepting a broadcast whose template does not compile', async () => {
    const res = await broadcast({ from: { email: `promo@${s.domain}` }, template: { subject: '{{#each}}', text: 't' }, messages: [{ to: [{ email: 'a@example.net' }] }] });
    expect(res.status).toBe(422);
    expect(res.body.code).toBe('templating_error');
  });

  it('refuses a template whose rendered subject is over 256 characters, and lists an entry whose data makes it so as a failure', async () => {
    const base = { from: { email: `promo@${s.domain}` }, messages: [{ to: [{ email: 'a@example.net' }] }] };
    const res = await broadcast({ ...base, template: { subject: 's'.repeat(257), text: 't' } });
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual({ '/template/subject': [{ code: 'max_length', message: 'must be at most 256 characters once rendered' }] });

    const mixed = await broadcast({
      ...base,
      template: { subject: 'Hi {{name}}', text: 't' },
      messages: [{ to: [{ email: 'short@example.net' }], data: { name: 'Ann' } }, { to: [{ email: 'long@example.net' }], data: { name: 'n'.repeat(300) } }],
    });
    expect(mixed.status).toBe(200);
    await t.daemon.submission.expander.drain();
    const failures = await t.api('GET', `/broadcasts/${mixed.body.broadcastId}/failures`);
    expect(failures.body).toEqual({
      totalCount: 1,
      results: [{ recipients: { to: [{ email: 'long@example.net' }], cc: [], bcc: [] }, messageIndex: 1, errorCode: 'validation_failed', errorMessage: expect.stringContaining('256') }],
    });
  });

  it('skips entries whose recipients are all suppressed', async () => {
    await t.api('POST', '/suppressions', { body: { channelId: s.channelId, mailType: 'broadcast', emails: ['unsub@example.net'] } });
    const res = await broadcast({
      from: { email: `promo@${s.domain}` },
      template: { subject: 's', text: 't' },
      messages: [{ to: [{ email: 'unsub@example.net' }] }, { to: [{ email: 'fine@example.net' }] }],
    });
    await t.daemon.submission.expander.drain();
    expect((await t.daemon.store.broadcasts.get(res.body.broadcastId))).toMatchObject({ state: 'done', messages: 1, skipped: 1 });
  });

  it('accepts 10,000 messages in one request and expands them all', async () => {
    const messages = Array.from({ length: 10_000 }, (_, i) => ({ to: [{ email: `user${i}@example.net` }], data: { n: i } }));
    const started = Date.now();
    const res = await broadcast({ from: { email: `promo@${s.domain}` }, template: { subject: 'Number {{n}}', text: 'n={{n}}' }, messages });
    expect(res.status).toBe(200);
    const answeredMs = Date.now() - started;
    await t.daemon.submission.expander.drain();
    const b = (await t.daemon.store.broadcasts.get(res.body.broadcastId))!;
    expect(b).toMatchObject({ state: 'done', total: 10_000, messages: 10_000 });
    // Expanded entries are removed from the store as they are turned into messages.
    expect((await t.daemon.store.broadcasts.entries(b.id, 0, Number.MAX_SAFE_INTEGER)).length).toBe(0);
    console.log(`10,000-entry broadcast answered in ${answeredMs} ms, expanded by ${Date.now() - started} ms`);
  }, 180_000);
});

describe('one 422 for the schema and the sending checks of a broadcast (issue 30 item 8)', () => {
  const NOT_LINKED = { code: 'domain_not_linked', message: 'unlinked-domain.com must be a domain of the account linked to the channel' };
  const unlinked = () => ({ from: { email: 'promo@unlinked-domain.com' }, template: { subject: 's', text: 't' }, messages: [{ to: [{ email: 'a@example.net' }] }] });

  it('names a too long subject and an unlinked from domain together', async () => {
    const res = await broadcast({ ...unlinked(), template: { subject: 's'.repeat(2049), text: 't' } });
    expect(res.status).toBe(422);
    expect(res.body.code).toBe('validation_failed');
    expect(res.body.errors).toEqual({
      '/template/subject': [{ code: 'max_length', message: 'must be at most 2048 characters' }],
      '/from/email': [NOT_LINKED],
    });
  });

  it('names the rules checked after the schema and an unlinked domain together', async () => {
    const res = await broadcast({ ...unlinked(), template: { subject: 's' }, messages: [] });
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual({
      '/template/html': [expect.objectContaining({ code: 'required' })],
      '/messages': [{ code: 'min_items', message: 'must have at least 1 item' }],
      '/from/email': [NOT_LINKED],
    });
  });

  it('names the schema\'s address and header errors with the rest', async () => {
    const res = await broadcast({ ...unlinked(), template: { subject: 's'.repeat(2049), text: 't' }, replyTo: [{ email: 'not-an-address' }] }, { 'x-service-channel-id': s.channelId, 'Idempotency-Key': 'has spaces' });
    expect(res.status).toBe(422);
    expect(Object.keys(res.body.errors).sort()).toEqual(['/Idempotency-Key', '/from/email', '/replyTo/0/email', '/template/subject']);
  });

  it('names the address errors of the entries beside the schema\'s', async () => {
    const res = await broadcast({ ...unlinked(), template: { subject: 's'.repeat(2049), text: 't' }, messages: [{ to: [{ email: 'ok@example.net' }] }, { to: [{ email: 'broken' }], cc: [{ email: 'a@' }] }] });
    expect(res.status).toBe(422);
    expect(Object.keys(res.body.errors).sort()).toEqual(['/from/email', '/messages/1/cc/0/email', '/messages/1/to/0/email', '/template/subject']);
  });

  it('adds an unverified domain to a 422 that fails anyway, and keeps 403 domain_unverified when it is the only problem', async () => {
    const unverified = await setupSender(t, dns, { verify: false });
    const body = { ...unlinked(), from: { email: `promo@${unverified.domain}` } };
    const headers = { 'x-service-channel-id': unverified.channelId };
    const both = await broadcast({ ...body, template: { subject: 's'.repeat(2049), text: 't' } }, headers);
    expect(both.status).toBe(422);
    expect(both.body.errors).toEqual({
      '/template/subject': [{ code: 'max_length', message: 'must be at most 2048 characters' }],
      '/from/email': [{ code: 'domain_unverified', message: `${unverified.domain} is not verified; publish its DNS records and call POST /domains/{id}/verify` }],
    });
    const afterSchema = await broadcast({ ...body, messages: [] }, headers);
    expect(afterSchema.status).toBe(422);
    expect(Object.keys(afterSchema.body.errors).sort()).toEqual(['/from/email', '/messages']);
    const alone = await broadcast(body, headers);
    expect(alone.status).toBe(403);
    expect(alone.body.code).toBe('domain_unverified');
    expect(alone.body.errors).toBeUndefined();
  });

  it('keeps a linked, verified domain out of the list, and the channel\'s own errors for a valid body', async () => {
    const res = await broadcast({ ...unlinked(), from: { email: `promo@${s.domain}` }, template: { subject: 's'.repeat(2049), text: 't' } });
    expect(Object.keys(res.body.errors)).toEqual(['/template/subject']);
    const noChannel = await t.api('POST', '/send/broadcast', { body: { ...unlinked(), template: { subject: 's'.repeat(2049), text: 't' } } });
    expect(noChannel.status).toBe(422);
    expect(Object.keys(noChannel.body.errors)).toEqual(['/template/subject']);
    const alone = await broadcast(unlinked());
    expect(alone.status).toBe(422);
    expect(alone.body.errors).toEqual({ '/from/email': [NOT_LINKED] });
  });
});
