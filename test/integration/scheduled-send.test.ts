/**
 * Scheduled sends through the real daemon (issue 34): POST /send/transactional with scheduledAt
 * answers 200 at once, the message shows as `scheduled` in activity while it waits, and a real
 * MX on 127.0.25.2 receives it only after its time. Bad times are 422 on /scheduledAt.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestDaemon } from '../support/daemon.js';
import { startDeliveryRig, type DeliveryRig } from '../support/delivery-rig.js';
import type { MxServer } from '../support/mx-server.js';
import type { Sender } from '../support/sending.js';
import { waitFor } from '../support/wait.js';

const RCPT_DOMAIN = 'scheduled-mail.net';
const DAY = 86_400_000;

let mx: MxServer;
let t: TestDaemon;
let s: Sender;
let rig: DeliveryRig | undefined;

beforeAll(async () => {
  rig = await startDeliveryRig({ mx: { address: '127.0.25.2', starttls: false }, domains: [RCPT_DOMAIN] });
  ({ mx, t, s } = rig);
});

afterAll(() => rig?.stop());

function body(to: string, scheduledAt?: string): Record<string, unknown> {
  return { from: { email: `app@${s.domain}` }, to: [{ email: to }], subject: 'Later', text: 'Hello', ...(scheduledAt !== undefined && { scheduledAt }) };
}

function send(to: string, scheduledAt?: string) {
  return t.api('POST', '/send/transactional', { headers: { 'x-service-channel-id': s.channelId }, body: body(to, scheduledAt) });
}

describe('scheduled sends through the API', () => {
  it('answers 200 at once, shows the message as scheduled, and delivers it to the MX only after its time', async () => {
    const to = `ann@${RCPT_DOMAIN}`;
    const at = new Date(Date.now() + 1500);
    const res = await send(to, at.toISOString().replace('Z', '+00:00'));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const id = res.body.messageId as string;

    const details = await t.api('GET', `/activity/messages/${id}`);
    expect(details.body).toMatchObject({ status: 'scheduled', scheduledAt: at.toISOString() });
    const list = await t.api('GET', `/activity/messages?channelId=${s.channelId}`);
    expect(list.body.results.find((m: { messageId: string }) => m.messageId === id)).toMatchObject({ status: 'scheduled', scheduledAt: at.toISOString() });
    expect(details.body.events[0]).toMatchObject({ eventType: 'accepted', details: { scheduledAt: at.toISOString() } });

    const got = await waitFor(() => mx.received.find((m) => m.to.includes(to)), { what: `the delivery to ${to}`, timeout: 15_000 });
    expect(Date.now()).toBeGreaterThanOrEqual(at.getTime());
    expect(got.raw.toString()).toContain('Subject: Later');
    const delivered = await waitFor(async () => (await t.api('GET', `/activity/messages/${id}`)).body.events.find((e: { eventType: string }) => e.eventType === 'delivered'), { what: 'the delivered event' });
    expect(Date.parse(delivered.timestamp)).toBeGreaterThanOrEqual(at.getTime());
    expect((await t.api('GET', `/activity/messages/${id}`)).body).toMatchObject({ status: 'sent', scheduledAt: at.toISOString() });
  });

  it('refuses a time without an offset, more than a minute past or beyond maxScheduleDays with 422 on /scheduledAt', async () => {
    const cases: Array<[string, string]> = [
      ['2026-12-06T09:00:00', 'invalid_format'],
      [new Date(Date.now() - 120_000).toISOString(), 'in_past'],
      [new Date(Date.now() + 31 * DAY).toISOString(), 'too_far'],
    ];
    for (const [value, code] of cases) {
      const res = await send(`bob@${RCPT_DOMAIN}`, value);
      expect(res.status, value).toBe(422);
      expect(res.body).toMatchObject({ code: 'validation_failed', errors: { '/scheduledAt': [{ code }] } });
    }
  });

  it('takes a leap second (RFC 3339 5.7: 23:59:60 UTC, at any offset) as the next day\'s 00:00:00, on a send and a PATCH; :60 at another minute is 422 invalid_format', async () => {
    const day = new Date(Date.now() + DAY).toISOString().slice(0, 10);
    const next = new Date(Date.parse(`${day}T00:00:00Z`) + DAY).toISOString();
    const res = await send(`leap@${RCPT_DOMAIN}`, `${day}T23:59:60Z`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const id = res.body.messageId as string;
    expect((await t.api('GET', `/activity/messages/${id}`)).body).toMatchObject({ status: 'scheduled', scheduledAt: next });
    const moved = await t.api('PATCH', `/activity/messages/${id}`, { body: { scheduledAt: `${day}T21:59:60.5-02:00` } });
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    expect(moved.body).toMatchObject({ messageId: id, status: 'scheduled', scheduledAt: next });
    for (const value of [`${day}T12:30:60Z`, `${day}T23:59:60+01:00`, `${day}T23:59:61Z`]) {
      const bad = await send(`leap@${RCPT_DOMAIN}`, value);
      expect(bad.status, value).toBe(422);
      expect(bad.body).toMatchObject({ code: 'validation_failed', errors: { '/scheduledAt': [{ code: 'invalid_format' }] } });
    }
    expect((await t.api('POST', `/activity/messages/${id}/cancel`)).status).toBe(200);
  });

  it('checks scheduledAt per entry of a batch', async () => {
    const res = await t.api('POST', '/send/transactional/batch', {
      headers: { 'x-service-channel-id': s.channelId },
      body: { requests: [body(`cy@${RCPT_DOMAIN}`, new Date(Date.now() + DAY).toISOString()), body(`dee@${RCPT_DOMAIN}`, 'soon')] },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const [first, second] = res.body.responses;
    expect(first).toMatchObject({ status: 'accepted' });
    expect(second).toMatchObject({ status: 'failed', errorCode: 'validation_failed' });
    expect(second.errorMessage).toContain('/requests/1/scheduledAt');
    const details = await t.api('GET', `/activity/messages/${first.messageId}`);
    expect(details.body.status).toBe('scheduled');
  });
});

describe('cancel and reschedule through the API', () => {
  const message = (id: string) => t.api('GET', `/activity/messages/${id}`);

  it('cancels a scheduled message: status canceled, a canceled event, no bounce, its jobs done; a second cancel is 409', async () => {
    const res = await send(`eve@${RCPT_DOMAIN}`, new Date(Date.now() + DAY).toISOString());
    const id = res.body.messageId as string;
    const cancel = await t.api('POST', `/activity/messages/${id}/cancel`);
    expect(cancel.status, JSON.stringify(cancel.body)).toBe(200);
    expect(cancel.body).toMatchObject({ messageId: id, status: 'canceled' });
    const details = await message(id);
    expect(details.body.status).toBe('canceled');
    expect(details.body.events.map((e: { eventType: string }) => e.eventType)).toEqual(['accepted', 'processed', 'canceled']);
    expect((await t.daemon.store.queue.jobsOfMessage(id)).every((j) => j.state === 'done' && j.canceledAt)).toBe(true);
    expect(await t.daemon.store.suppressions.is(s.channelId, 'transactional', `eve@${RCPT_DOMAIN}`)).toBe(false);
    const again = await t.api('POST', `/activity/messages/${id}/cancel`);
    expect([again.status, again.body.code]).toEqual([409, 'conflict']);
    const moved = await t.api('PATCH', `/activity/messages/${id}`, { body: { scheduledAt: new Date(Date.now() + DAY).toISOString() } });
    expect([moved.status, moved.body.code]).toEqual([409, 'conflict']);
  });

  it('moves a scheduled message earlier with PATCH and delivers it at the new time', async () => {
    const to = `fay@${RCPT_DOMAIN}`;
    const id = (await send(to, new Date(Date.now() + DAY).toISOString())).body.messageId as string;
    const at = new Date(Date.now() + 1000);
    const moved = await t.api('PATCH', `/activity/messages/${id}`, { body: { scheduledAt: at.toISOString() } });
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    expect(moved.body).toMatchObject({ messageId: id, status: 'scheduled', scheduledAt: at.toISOString() });
    await waitFor(() => mx.received.find((m) => m.to.includes(to)), { what: `the delivery to ${to}`, timeout: 15_000 });
    expect(Date.now()).toBeGreaterThanOrEqual(at.getTime());
    await waitFor(async () => (await message(id)).body.status === 'sent', { what: 'the message to be sent' });
    const late = await t.api('POST', `/activity/messages/${id}/cancel`);
    expect([late.status, late.body.code]).toEqual([409, 'conflict']);
  });

  it('refuses a bad new time with 422 on /scheduledAt, an unknown message with 404, and a message that is not scheduled with 409', async () => {
    const id = (await send(`gus@${RCPT_DOMAIN}`, new Date(Date.now() + DAY).toISOString())).body.messageId as string;
    for (const [value, code] of [['next week', 'invalid_format'], [new Date(Date.now() + 40 * DAY).toISOString(), 'too_far']]) {
      const res = await t.api('PATCH', `/activity/messages/${id}`, { body: { scheduledAt: value } });
      expect(res.status, value).toBe(422);
      expect(res.body.errors['/scheduledAt'][0].code).toBe(code);
    }
    const missing = await t.api('PATCH', `/activity/messages/${id}`, { body: {} });
    expect(missing.status).toBe(422);
    const unknown = await t.api('POST', '/activity/messages/6f1c1d3e-0000-4000-8000-000000000000/cancel');
    expect([unknown.status, unknown.body.code]).toEqual([404, 'not_found']);
    const now = await send(`hal@${RCPT_DOMAIN}`);
    const res = await t.api('PATCH', `/activity/messages/${now.body.messageId}`, { body: { scheduledAt: new Date(Date.now() + DAY).toISOString() } });
    expect([res.status, res.body.code]).toEqual([409, 'conflict']);
  });
});
