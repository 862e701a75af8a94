/**
 * null for an optional request field is its absence (http/null-fields.ts): SDK serialisers that
 * write unset properties as null (.NET System.Text.Json and Newtonsoft, Java Jackson without
 * NON_NULL, generated OpenAPI clients) send as those that leave them out. A required field given
 * as null is still refused, and a PATCH field whose null has a meaning (clearing) keeps it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MessageRecord } from '../../src/domain/types.js';
import { startDaemonWithDns, stopDaemonWithDns, type TestDaemon } from '../support/daemon.js';
import type { TestDns } from '../support/dns-server.js';
import { setupSender, type Sender } from '../support/sending.js';

let dns: TestDns;
let t: TestDaemon;
let s: Sender;

const headers = () => ({ 'X-Helo-Channel-Id': s.channelId });
const post = (path: string, body: unknown) => t.api('POST', path, { body, headers: headers() });

/** A send body with its optional fields given, and the same body with each of them null. */
const base = () => ({ from: { email: `news@${s.domain}` }, to: [{ email: 'ann@example.net' }], subject: 'Hello', text: 'Hi' });
const OPTIONAL_SEND_FIELDS = ['cc', 'bcc', 'replyTo', 'html', 'template', 'tracking', 'attachments', 'tags', 'headers', 'metadata', 'scheduledAt'];
const allNull = () => ({ ...base(), ...Object.fromEntries(OPTIONAL_SEND_FIELDS.map((f) => [f, null])) });

/** Nulls at depth (an address's name, tracking's, an attachment's and an inline template's optional fields), or the same body without them. */
const nested = (nulls: boolean) => {
  const drop = (o: Record<string, unknown>) => (nulls ? o : Object.fromEntries(Object.entries(o).filter(([, v]) => v !== null)));
  return drop({
    from: drop({ email: `news@${s.domain}`, name: null }),
    to: [drop({ email: 'ann@example.net', name: null })],
    subject: null,
    text: null,
    template: drop({ subject: 'Hi {{who}}', text: 'Hello {{who}}', html: null, id: null, alias: null, version: null, inlineStyles: null, data: { who: 'Ann', none: null } }),
    tracking: drop({ opens: null, links: true }),
    attachments: [drop({ content: 'aGVsbG8=', fileName: 'a.txt', contentId: null, contentType: null, disposition: null })],
  });
};

/** What a message keeps of its request: the record without what differs between any two sends. */
async function stored(messageId: string): Promise<Partial<MessageRecord>> {
  const { id, createdAt, messageIdHeader, acceptedSeq, size, ...rest } = (await t.daemon.store.messages.get(messageId))!;
  return rest;
}

beforeAll(async () => {
  ({ t, dns } = await startDaemonWithDns());
  s = await setupSender(t, dns, { deliveryType: 'sandbox' });
});

afterAll(() => stopDaemonWithDns({ t, dns }));

describe('null for an optional request field', () => {
  it('sends a message with every optional field null as the same message without them', async () => {
    const withNulls = await post('/send/transactional', allNull());
    expect(withNulls.status, JSON.stringify(withNulls.body)).toBe(200);
    const without = await post('/send/transactional', base());
    expect(without.status).toBe(200);
    expect(await stored(withNulls.body.messageId)).toEqual(await stored(without.body.messageId));
  });

  it('drops nulls of optional fields at every depth, and keeps those inside free-form template data', async () => {
    const withNulls = await post('/send/transactional', nested(true));
    expect(withNulls.status, JSON.stringify(withNulls.body)).toBe(200);
    const without = await post('/send/transactional', nested(false));
    expect(without.status, JSON.stringify(without.body)).toBe(200);
    expect(await stored(withNulls.body.messageId)).toEqual(await stored(without.body.messageId));
    expect(await stored(withNulls.body.messageId)).toMatchObject({ subject: 'Hi Ann', tracking: { links: true }, attachments: [{ fileName: 'a.txt' }] });
  });

  it('still refuses a required field given as null with its code', async () => {
    const res = await post('/send/transactional', { ...base(), from: null, to: [{ email: null }] });
    expect(res.status).toBe(422);
    expect(res.body.code).toBe('validation_failed');
    expect(res.body.errors).toEqual({
      '/from': [{ code: 'invalid_type', message: 'must be an object' }],
      '/to/0/email': [{ code: 'invalid_type', message: 'must be a string' }],
    });
  });

  it('accepts a batch entry with nulls, and fails only the entry whose required field is null', async () => {
    const res = await post('/send/transactional/batch', { requests: [allNull(), { ...base(), to: null }] });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const [accepted, failed] = res.body.responses;
    expect(accepted).toMatchObject({ status: 'accepted', suppressions: [] });
    expect(failed).toEqual({ status: 'failed', errorCode: 'validation_failed', errorMessage: expect.stringContaining('/requests/1/to') });
    const single = await post('/send/transactional', base());
    expect(await stored(accepted.messageId)).toEqual(await stored(single.body.messageId));
  });

  it('accepts a broadcast whose optional fields and entry fields are null', async () => {
    const res = await post('/send/broadcast', {
      from: { email: `promo@${s.domain}`, name: null },
      template: { subject: 'Hi', text: 'Hello', html: null, data: null },
      messages: [{ to: [{ email: 'ann@example.net' }], cc: null, bcc: null, tags: null, headers: null, metadata: null, data: null }],
      replyTo: null, tracking: null, attachments: null, tags: null, headers: null, metadata: null, scheduledAt: null,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({ status: 'accepted', broadcastId: expect.any(String) });
  });

  it('creates resources with null optional fields (channel, domain, template, API key), and takes null rotate-key options as none', async () => {
    const channel = await t.api('POST', '/channels', { body: { name: 'nulls', deliveryType: null, tracking: null, ipPool: null } });
    expect(channel.status, JSON.stringify(channel.body)).toBe(200);
    expect(channel.body.deliveryType).toBe('live');
    const domain = await t.api('POST', '/domains', { body: { name: 'nulls-example.com', channelIds: null, dkimAlgorithm: null } });
    expect(domain.status, JSON.stringify(domain.body)).toBe(200);
    const rotated = await t.api('POST', `/domains/${domain.body.id}/rotate-key`, { body: { dkimAlgorithm: null } });
    expect(rotated.status, JSON.stringify(rotated.body)).toBe(200);
    const template = await t.api('POST', '/templates', { body: { name: 'N', alias: null, channelIds: null, subject: 'S', html: null, text: 'T', inlineStyles: null } });
    expect(template.status, JSON.stringify(template.body)).toBe(200);
    const key = await t.api('POST', '/api-keys', { body: { name: null, channelId: null } });
    expect(key.status, JSON.stringify(key.body)).toBe(200);
    expect(key.body.channelId).toBeNull();
  });

  it('on PATCH leaves a field null cannot clear unchanged, and clears one whose null means that', async () => {
    const created = await t.api('POST', '/templates', { body: { name: 'Receipt', alias: 'receipt-null', subject: 'S', text: 'T' } });
    expect(created.status).toBe(200);
    const patched = await t.api('PATCH', `/templates/${created.body.id}`, { body: { name: null, subject: null, alias: null, html: '<p>H</p>', inlineStyles: null } });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect(patched.body).toMatchObject({ name: 'Receipt', alias: null });
    const channel = await t.api('PATCH', `/channels/${s.channelId}`, { body: { name: null, deliveryType: null, tracking: { opens: true, links: null } } });
    expect(channel.status, JSON.stringify(channel.body)).toBe(200);
    expect(channel.body).toMatchObject({ deliveryType: 'sandbox', tracking: { opens: true } });
  });

  it('is stated in the OpenAPI document: optional fields are nullable, required ones are not', async () => {
    const doc = (await t.api('GET', '/openapi.json')).body;
    const body = (p: string, m: string) => doc.paths[p][m].requestBody.content['application/json'].schema;
    const send = body('/send/transactional', 'post');
    expect(send.properties.cc.type).toEqual(['array', 'null']);
    expect(send.properties.from.type).toBe('object');
    expect(send.properties.from.properties.name.type).toEqual(['string', 'null']);
    expect(send.properties.from.properties.email.type).toBe('string');
    expect(send.properties.tracking.properties.opens.type).toEqual(['boolean', 'null']);
    expect(body('/channels/{id}', 'patch').properties.deliveryType).toMatchObject({ type: ['string', 'null'], enum: ['live', 'sandbox', null] });
    expect(body('/channels/{id}', 'patch').properties.ipPool.type).toEqual(['string', 'null']);
    expect(body('/domains/{id}/rotate-key', 'post').properties.dkimAlgorithm.enum).toContain(null);
  });
});
