/**
 * POST /send/broadcast/message (api-surface.md, sending.broadcastMessage): a SendMessageRequest
 * sent as broadcast mail: broadcast suppressions, broadcast statistics and List-Unsubscribe, as
 * the messages of POST /send/broadcast get them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newAccount } from '../support/domains.js';
import { finishedMessage, signedBody } from '../support/signing.js';
import { startDaemonWithDns, stopDaemonWithDns, type TestDaemon } from '../support/daemon.js';
import type { TestDns } from '../support/dns-server.js';
import { setupSender, type Sender } from '../support/sending.js';

const PUBLIC = 'https://links.postrider-test.net';
let dns: TestDns;
let t: TestDaemon;
let s: Sender;

const send = (body: unknown, opts: { channel?: string; key?: string | null; headers?: Record<string, string> } = {}) =>
  t.api('POST', '/send/broadcast/message', { body, key: opts.key, headers: { 'X-Helo-Channel-Id': opts.channel ?? s.channelId, ...opts.headers } });
const msg = (to: string[], extra: Record<string, unknown> = {}, sender: Sender = s) => ({
  from: { email: `news@${sender.domain}` },
  to: to.map((email) => ({ email })),
  subject: 'Spring news',
  html: '<p>News</p>',
  text: 'News',
  ...extra,
});
/** A header field of a stored message, unfolded. */
const headerOf = (raw: Buffer, name: string) =>
  new RegExp(`^${name}:[ \\t]*(.*(?:\\r\\n[ \\t].*)*)`, 'im').exec(raw.toString())?.[1].replace(/\r\n[ \t]+/g, ' ');
const totals = async (channelId: string) => (await t.api('GET', `/statistics/totals?channelId=${channelId}`)).body;
const suppress = async (channelId: string, mailType: string, emails: string[]) =>
  expect((await t.api('POST', '/suppressions', { body: { channelId, mailType, emails } })).status).toBe(200);

beforeAll(async () => {
  ({ t, dns } = await startDaemonWithDns({ publicUrl: PUBLIC }));
  s = await setupSender(t, dns);
});

afterAll(() => stopDaemonWithDns({ t, dns }));

describe('POST /send/broadcast/message', () => {
  it('accepts the message as broadcast mail with List-Unsubscribe and one-click List-Unsubscribe-Post', async () => {
    const res = await send(msg(['ann@example.net'], { tags: ['spring'], metadata: { campaign: 'c1' } }));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({ status: 'accepted', messageId: expect.stringMatching(/^[0-9a-f-]{36}$/), suppressions: [] });
    const m = (await t.daemon.store.messages.get(res.body.messageId))!;
    expect(m).toMatchObject({ mailType: 'broadcast', mailSource: 'api', status: 'queued', channelId: s.channelId, tags: ['spring'], metadata: { campaign: 'c1' } });
    expect(m.broadcastId).toBeUndefined();
    const raw = await signedBody(t.daemon.store, m.id);
    expect(headerOf(raw, 'List-Unsubscribe')).toMatch(new RegExp(`<${PUBLIC}/unsubscribe\\?token=[^>]+>`));
    expect(headerOf(raw, 'List-Unsubscribe-Post')).toBe('List-Unsubscribe=One-Click');
    expect((await t.daemon.store.events.ofMessage(m.id)).map((e) => [e.eventType, e.mailType])).toEqual([
      ['accepted', 'broadcast'],
      ['processed', 'broadcast'],
    ]);
  });

  it('counts in the broadcast statistics, not the transactional ones', async () => {
    const sb = await setupSender(t, dns, { deliveryType: 'sandbox' });
    const res = await send(msg(['stat@example.net'], {}, sb), { channel: sb.channelId });
    expect(res.status).toBe(200);
    await finishedMessage(t.daemon.store, res.body.messageId);
    const stats = await totals(sb.channelId);
    expect(stats.broadcast).toMatchObject({ sent: 1, delivered: 1 });
    expect(stats.transactional).toMatchObject({ sent: 0, delivered: 0 });
  });

  it('applies broadcast suppressions, not transactional ones', async () => {
    await suppress(s.channelId, 'broadcast', ['left@example.net']);
    await suppress(s.channelId, 'transactional', ['tx-only@example.net']);
    const res = await send(msg(['left@example.net', 'tx-only@example.net']));
    expect(res.status).toBe(200);
    expect(res.body.suppressions).toEqual(['left@example.net']);
    expect((await t.daemon.store.messages.get(res.body.messageId))!.recipients).toEqual(['tx-only@example.net']);
    const all = await send(msg(['left@example.net']));
    expect(all.status).toBe(422);
    expect(all.body.code).toBe('recipients_suppressed');
  });

  it('refuses custom List-Unsubscribe headers and invalid fields with a 422 naming every pointer', async () => {
    const res = await send(msg(['x@example.net'], { headers: { 'List-Unsubscribe': '<https://evil.example/u>' } }));
    expect(res.status).toBe(422);
    expect(Object.keys(res.body.errors)).toEqual(['/headers/List-Unsubscribe']);
    const bad = await send({ ...msg(['x@example.net']), subject: 'x'.repeat(257), to: [{ name: 'no address' }], bogus: 1 });
    expect(bad.status).toBe(422);
    expect(Object.keys(bad.body.errors).sort()).toEqual(['/bogus', '/subject', '/to/0/email']);
  });

  it('names a too long subject and an unlinked from domain in one 422, and keeps 403 domain_unverified when that is the only problem (issue 30 item 8)', async () => {
    const both = await send(msg(['x@example.net'], { from: { email: 'news@unlinked-domain.com' }, subject: 'x'.repeat(257) }));
    expect(both.status).toBe(422);
    expect(both.body.errors).toEqual({
      '/subject': [{ code: 'max_length', message: 'must be at most 256 characters' }],
      '/from/email': [{ code: 'domain_not_linked', message: 'unlinked-domain.com must be a domain of the account linked to the channel' }],
    });
    const unverified = await setupSender(t, dns, { verify: false });
    const listed = await send(msg(['x@example.net'], { subject: 'x'.repeat(257) }, unverified), { channel: unverified.channelId });
    expect(listed.status).toBe(422);
    expect(Object.keys(listed.body.errors).sort()).toEqual(['/from/email', '/subject']);
    expect(listed.body.errors['/from/email'][0].code).toBe('domain_unverified');
    const alone = await send(msg(['x@example.net'], {}, unverified), { channel: unverified.channelId });
    expect(alone.status).toBe(403);
    expect(alone.body.code).toBe('domain_unverified');
  });

  it('replays the first answer for the same idempotency key and refuses it with another body', async () => {
    const headers = { 'X-Helo-Idempotency-Key': `bm-${Date.now()}` };
    const first = await send(msg(['idem@example.net']), { headers });
    const before = (await t.daemon.store.messages.count());
    const again = await send(msg(['idem@example.net']), { headers });
    expect(again.body).toEqual(first.body);
    expect((await t.daemon.store.messages.count())).toBe(before);
    const other = await send(msg(['other@example.net']), { headers });
    expect(other.status).toBe(422);
    expect(other.body.errors['/X-Helo-Idempotency-Key'][0].code).toBe('conflict');
    // The key is per route: the same key and body on the transactional route is another request.
    const tx = await t.api('POST', '/send/transactional', { body: msg(['idem@example.net']), headers: { 'X-Helo-Channel-Id': s.channelId, ...headers } });
    expect(tx.status).toBe(422);
  });

  it('answers 401 without a key, 403 for another account\'s channel and 404 for an unknown channel', async () => {
    expect((await send(msg(['a@example.net']), { key: null })).status).toBe(401);
    const { key: token } = await newAccount(t);
    expect((await send(msg(['a@example.net']), { key: token })).status).toBe(403);
    const missing = await send(msg(['a@example.net']), { channel: '00000000-0000-4000-8000-000000000000' });
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe('channel_not_found');
  });
});
