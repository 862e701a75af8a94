/**
 * Errors a first-hour user can act on (issue 30 item 8), through the daemon's real HTTP port:
 * broken JSON says where, unknown fields named as other providers name them say which field is
 * meant, and one 422 carries the schema errors and the sending checks together.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemonWithDns, stopDaemonWithDns, type TestDaemon } from '../support/daemon.js';
import type { TestDns } from '../support/dns-server.js';
import { setupSender, type Sender } from '../support/sending.js';

let dns: TestDns;
let t: TestDaemon;
let live: Sender;

beforeAll(async () => {
  ({ t, dns } = await startDaemonWithDns());
  live = await setupSender(t, dns);
});

afterAll(() => stopDaemonWithDns({ t, dns }));

const send = (body: unknown, channel = live.channelId) =>
  t.api('POST', '/send/transactional', { body, headers: { 'x-service-channel-id': channel } });

const basic = () => ({ from: { email: `news@${live.domain}` }, to: [{ email: 'alice@example.net' }], subject: 'Hello', text: 'Hi' });

describe('broken JSON', () => {
  it('is answered with its line, column and what was expected', async () => {
    const res = await t.api('POST', '/send/transactional', { rawBody: '{\n  "from": {"email": "a@b.org"},\n    }', headers: { 'x-service-channel-id': live.channelId } });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('invalid_json');
    expect(res.body.detail).toBe("The body is not valid JSON: unexpected '}' at line 3, column 5 (offset 38); expected a property name in double quotes");
  });

  it('says where a body the pre-scan already refuses goes wrong', async () => {
    const res = await t.api('POST', '/channels', { rawBody: '{"name": "x"}}' });
    expect(res.status).toBe(400);
    expect(res.body.detail).toBe("The body is not valid JSON: unexpected '}' at line 1, column 14 (offset 13); expected nothing after the JSON value");
  });
});

describe('unknown fields', () => {
  it('keep unknown_field and say which field of ours is meant', async () => {
    const res = await send({ ...basic(), reply_to: [{ email: 'r@example.net' }], from_email: 'x@y.org', html_body: '<p>x</p>', template_id: 'welcome', sendAt: 'now' });
    expect(res.status).toBe(422);
    expect(res.body.code).toBe('validation_failed');
    expect(res.body.errors).toMatchObject({
      '/reply_to': [{ code: 'unknown_field', message: 'is not a known field; did you mean "replyTo"?' }],
      '/from_email': [{ code: 'unknown_field', message: 'is not a known field; did you mean "from"?' }],
      '/html_body': [{ code: 'unknown_field', message: 'is not a known field; did you mean "html"?' }],
      '/template_id': [{ code: 'unknown_field', message: expect.stringMatching(/^is not a known field; did you mean "template\.id"\? \(a stored template is named inside template/) }],
      '/sendAt': [{ code: 'unknown_field', message: 'is not a known field' }],
    });
  });

  it('say it in a batch entry too, and on broadcasts', async () => {
    const batch = await t.api('POST', '/send/transactional/batch', { body: { requests: [{ ...basic(), ReplyTo: [] }] }, headers: { 'x-service-channel-id': live.channelId } });
    expect(batch.status).toBe(200);
    expect(batch.body.responses[0].errorMessage).toContain('/ReplyTo (is not a known field; did you mean "replyTo"?)');
    const broadcast = await t.api('POST', '/send/broadcast', {
      body: { from: basic().from, template: { subject: 'x', text: 'y' }, messages: [{ to: [{ email: 'a@example.net' }], dynamic_template_data: {} }] },
      headers: { 'x-service-channel-id': live.channelId },
    });
    expect(broadcast.status).toBe(422);
    expect(broadcast.body.errors['/messages/0/dynamic_template_data']).toEqual([{ code: 'unknown_field', message: 'is not a known field; did you mean "data"?' }]);
  });

  it('say too many items in our words, not Ajv\'s', async () => {
    const res = await send({ ...basic(), to: Array.from({ length: 51 }, (_, i) => ({ email: `r${i}@example.net` })) });
    expect(res.body.errors['/to']).toEqual([{ code: 'max_items', message: 'must have at most 50 items' }]);
  });
});

describe('one 422 for the schema and the sending checks', () => {
  const unlinked = () => ({ ...basic(), from: { email: 'me@unlinked-domain.com' } });

  it('names a too long subject and an unlinked from domain together', async () => {
    const res = await send({ ...unlinked(), subject: 's'.repeat(300) });
    expect(res.status).toBe(422);
    expect(res.body.code).toBe('validation_failed');
    expect(res.body.errors).toEqual({
      '/subject': [{ code: 'max_length', message: 'must be at most 256 characters' }],
      '/from/email': [{ code: 'domain_not_linked', message: 'unlinked-domain.com must be a domain of the account linked to the channel' }],
    });
  });

  it('names the rules checked after the schema and an unlinked domain together', async () => {
    const res = await send({ ...unlinked(), headers: { 'DKIM-Signature': 'v=1' }, cc: Array.from({ length: 50 }, (_, i) => ({ email: `c${i}@example.net` })) });
    expect(res.status).toBe(422);
    expect(Object.keys(res.body.errors).sort()).toEqual(['/from/email', '/headers/DKIM-Signature', '/to']);
    expect(res.body.errors['/from/email'][0].code).toBe('domain_not_linked');
  });

  it('adds an unverified domain to a 422 that fails anyway, and keeps 403 domain_unverified when it is the only problem', async () => {
    const unverified = await setupSender(t, dns, { verify: false });
    const from = { email: `x@${unverified.domain}` };
    const both = await send({ ...basic(), from, subject: 's'.repeat(300) }, unverified.channelId);
    expect(both.status).toBe(422);
    expect(both.body.errors).toEqual({
      '/subject': [{ code: 'max_length', message: 'must be at most 256 characters' }],
      '/from/email': [{ code: 'domain_unverified', message: `${unverified.domain} is not verified; publish its DNS records and call POST /domains/{id}/verify` }],
    });
    const alone = await send({ ...basic(), from }, unverified.channelId);
    expect(alone.status).toBe(403);
    expect(alone.body.code).toBe('domain_unverified');
    expect(alone.body.errors).toBeUndefined();
  });

  it('keeps a linked, verified domain out of the list, and the channel\'s own errors for a valid body', async () => {
    const res = await send({ ...basic(), subject: 's'.repeat(300) });
    expect(Object.keys(res.body.errors)).toEqual(['/subject']);
    const noChannel = await t.api('POST', '/send/transactional', { body: { ...unlinked(), subject: 's'.repeat(300) } });
    expect(noChannel.status).toBe(422);
    expect(Object.keys(noChannel.body.errors)).toEqual(['/subject']);
  });
});
