/**
 * Scheduled broadcasts through the real daemon (issue 34): POST /send/broadcast with scheduledAt
 * answers 200 at once and expands at once; the broadcast and its messages show `scheduled` until
 * the time, and a real MX on 127.0.25.3 receives the messages only after it. A cancel before the
 * time ends every message `canceled` and keeps the entries not yet expanded from ever being
 * expanded; a restart mid-expansion keeps the time. POST /send/broadcast/message takes scheduledAt
 * as a transactional send does (it shares its path).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MessageRecord } from '../../src/domain/types.js';
import type { TestDaemon } from '../support/daemon.js';
import { startDeliveryRig, type DeliveryRig } from '../support/delivery-rig.js';
import type { MxServer } from '../support/mx-server.js';
import type { Sender } from '../support/sending.js';
import { waitFor } from '../support/wait.js';

const RCPT_DOMAIN = 'scheduled-broadcast.net';
const DAY = 86_400_000;

let mx: MxServer;
let t: TestDaemon;
let s: Sender;
let rig: DeliveryRig | undefined;

beforeAll(async () => {
  rig = await startDeliveryRig({ mx: { address: '127.0.25.3', starttls: false }, domains: [RCPT_DOMAIN] });
  ({ mx, t, s } = rig);
});

afterAll(() => rig?.stop());

/** The instant as RFC 3339 at UTC+02:00 (an offset other than Z: the API keeps the instant, in UTC). */
function at2(ms: number): string {
  return new Date(ms + 2 * 3_600_000).toISOString().replace('Z', '+02:00');
}

function rcpts(prefix: string, n: number): string[] {
  return Array.from({ length: n }, (_, i) => `${prefix}${i}@${RCPT_DOMAIN}`);
}

function sendBroadcast(to: string[], scheduledAt?: string) {
  return t.api('POST', '/send/broadcast', {
    headers: { 'x-service-channel-id': s.channelId },
    body: {
      from: { email: `news@${s.domain}` },
      template: { subject: 'Later {{name}}', text: 'Hello {{name}}' },
      messages: to.map((email, i) => ({ to: [{ email }], data: { name: `n${i}` } })),
      ...(scheduledAt !== undefined && { scheduledAt }),
    },
  });
}

async function messagesOf(broadcastId: string): Promise<MessageRecord[]> {
  return (await t.daemon.store.messages.all()).filter((m) => m.broadcastId === broadcastId);
}

const details = async (id: string) => (await t.api('GET', `/activity/messages/${id}`)).body;
const receivedBy = (rcpt: string) => mx.received.filter((m) => m.to.includes(rcpt)).length;

describe('POST /send/broadcast with scheduledAt', () => {
  it('refuses a time without an offset, more than a minute past or beyond maxScheduleDays with 422 on /scheduledAt', async () => {
    const cases: Array<[string, string]> = [
      ['2026-12-06T09:00:00', 'invalid_format'],
      [new Date(Date.now() - 120_000).toISOString(), 'in_past'],
      [new Date(Date.now() + 31 * DAY).toISOString(), 'too_far'],
    ];
    for (const [value, code] of cases) {
      const res = await sendBroadcast(rcpts('bad', 1), value);
      expect(res.status, value).toBe(422);
      expect(res.body).toMatchObject({ code: 'validation_failed', errors: { '/scheduledAt': [{ code }] } });
    }
  });

  it('takes a leap second (RFC 3339 5.7: 23:59:60 UTC) as the next day\'s 00:00:00 for the broadcast and its messages', async () => {
    const day = new Date(Date.now() + DAY).toISOString().slice(0, 10);
    const next = new Date(Date.parse(`${day}T00:00:00Z`) + DAY).toISOString();
    const res = await sendBroadcast(rcpts('leap', 1), `${day}T23:59:60Z`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const id = res.body.broadcastId as string;
    await t.daemon.submission.expander.drain();
    expect((await t.api('GET', `/broadcasts/${id}`)).body).toMatchObject({ id, status: 'scheduled', scheduledAt: next });
    expect((await messagesOf(id)).map((m) => m.scheduledAt)).toEqual([next]);
    expect((await t.api('POST', `/broadcasts/${id}/cancel`)).status).toBe(200);
  });

  it('shows the broadcast and its messages as scheduled, then delivers every message to the MX only after the time', async () => {
    const to = rcpts('ann', 3);
    const at = Date.now() + 4000;
    const res = await sendBroadcast(to, at2(at));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const id = res.body.broadcastId as string;
    const iso = new Date(at).toISOString();

    await t.daemon.submission.expander.drain();
    const b = await t.api('GET', `/broadcasts/${id}`);
    expect(b.body).toMatchObject({ id, status: 'scheduled', scheduledAt: iso, messages: 3 });
    const listed = await t.api('GET', `/broadcasts?channelId=${s.channelId}&status=scheduled`);
    expect(listed.body.results.map((r: { id: string }) => r.id)).toContain(id);
    expect(listed.body.results.find((r: { id: string }) => r.id === id)).toMatchObject({ status: 'scheduled', scheduledAt: iso });
    const msgs = await messagesOf(id);
    expect(msgs).toHaveLength(3);
    for (const m of msgs) {
      expect(await details(m.id)).toMatchObject({ status: 'scheduled', scheduledAt: iso });
      expect((await t.daemon.store.queue.jobsOfMessage(m.id)).map((j) => j.dueAt)).toEqual([iso]);
    }

    for (const rcpt of to) await waitFor(() => receivedBy(rcpt) > 0, { what: `the delivery to ${rcpt}`, timeout: 20_000 });
    expect(Date.now()).toBeGreaterThanOrEqual(at);
    for (const m of msgs) {
      const delivered = await waitFor(async () => (await details(m.id)).events.find((e: { eventType: string }) => e.eventType === 'delivered'), { what: 'the delivered event' });
      expect(Date.parse(delivered.timestamp)).toBeGreaterThanOrEqual(at);
    }
    const done = await waitFor(async () => ((await t.api('GET', `/broadcasts/${id}`)).body.status === 'completed' ? true : undefined), { what: 'the broadcast to complete' });
    expect(done).toBe(true);
    expect((await t.api('GET', `/broadcasts/${id}`)).body).toMatchObject({ status: 'completed', scheduledAt: iso, completion: '100%' });
  });

  it('cancels before the time: every message ends canceled with its canceled event, and the MX receives none of them', async () => {
    const to = rcpts('bob', 3);
    const at = Date.now() + 2000;
    const id = (await sendBroadcast(to, new Date(at).toISOString())).body.broadcastId as string;
    await t.daemon.submission.expander.drain();
    // A message due just after the broadcast's time: once the MX has it, the dispatcher went past that time.
    const control = `control@${RCPT_DOMAIN}`;
    const sent = await t.api('POST', '/send/transactional', {
      headers: { 'x-service-channel-id': s.channelId },
      body: { from: { email: `app@${s.domain}` }, to: [{ email: control }], subject: 'Control', text: 'x', scheduledAt: new Date(at + 500).toISOString() },
    });
    expect(sent.status).toBe(200);

    const canceled = await t.api('POST', `/broadcasts/${id}/cancel`);
    expect(canceled.status, JSON.stringify(canceled.body)).toBe(200);
    expect(canceled.body).toMatchObject({ id, status: 'canceled', messages: 3, canceled: 3, completion: '100%' });
    const msgs = await messagesOf(id);
    expect(msgs).toHaveLength(3);
    for (const m of msgs) {
      const d = await waitFor(async () => {
        const body = await details(m.id);
        return body.events.some((e: { eventType: string }) => e.eventType === 'canceled') ? body : undefined;
      }, { what: 'the canceled event' });
      expect(d.status).toBe('canceled');
      expect(d.events.map((e: { eventType: string }) => e.eventType)).toEqual(['accepted', 'processed', 'canceled']);
      expect((await t.daemon.store.queue.jobsOfMessage(m.id)).every((j) => j.state === 'done' && j.canceledAt)).toBe(true);
    }

    await waitFor(() => receivedBy(control) > 0, { what: 'the control message, due after the broadcast', timeout: 20_000 });
    expect(to.map(receivedBy)).toEqual([0, 0, 0]);
    expect((await t.api('GET', `/broadcasts/${id}`)).body).toMatchObject({ status: 'canceled', scheduledAt: new Date(at).toISOString() });
  });

  it('never expands the entries a cancel before the time found unexpanded', async () => {
    await t.daemon.submission.expander.stop();
    const id = (await sendBroadcast(rcpts('cy', 5), new Date(Date.now() + DAY).toISOString())).body.broadcastId as string;
    expect((await t.api('GET', `/broadcasts/${id}`)).body).toMatchObject({ status: 'scheduled', messages: 5, completion: '0%' });
    const canceled = await t.api('POST', `/broadcasts/${id}/cancel`);
    expect(canceled.body).toMatchObject({ status: 'canceled', canceled: 0 });
    await t.daemon.submission.expander.start();
    await t.daemon.submission.expander.drain();
    expect(await messagesOf(id)).toEqual([]);
    expect(await t.daemon.store.broadcasts.get(id)).toMatchObject({ state: 'done', canceledEntries: 5 });
  });

  it('keeps the time for the entries expanded after a restart mid-expansion', async () => {
    await t.daemon.submission.expander.stop();
    const iso = new Date(Date.now() + DAY).toISOString();
    const id = (await sendBroadcast(rcpts('dee', 250), iso)).body.broadcastId as string;
    // Stopped while its second batch is prepared: that batch commits, the third waits for the restart.
    const deps = t.daemon.submission.deps;
    const realDomains = deps.domains;
    let batches = 0;
    deps.domains = {
      findSendingDomain: (q) => realDomains.findSendingDomain(q),
      signingKey: (q) => {
        if (++batches === 2) void t.daemon.submission.expander.stop();
        return realDomains.signingKey(q);
      },
    };
    await t.daemon.submission.expander.start();
    await waitFor(async () => (await t.daemon.store.broadcasts.get(id))?.cursor === 200, { what: 'two batches committed' });
    deps.domains = realDomains;
    expect(await t.daemon.store.broadcasts.get(id)).toMatchObject({ state: 'expanding', cursor: 200 });

    await t.restart();
    await t.daemon.submission.expander.drain();
    expect(await t.daemon.store.broadcasts.get(id)).toMatchObject({ state: 'done', cursor: 250, scheduledAt: iso });
    const msgs = await messagesOf(id);
    expect(msgs).toHaveLength(250);
    expect(msgs.every((m) => m.scheduledAt === iso)).toBe(true);
    const late = msgs.filter((m) => Number(/^dee(\d+)@/.exec(m.recipients[0]!)![1]) >= 200);
    expect(late).toHaveLength(50);
    for (const m of late.slice(0, 5)) expect((await t.daemon.store.queue.jobsOfMessage(m.id)).map((j) => j.dueAt)).toEqual([iso]);
    expect((await t.api('GET', `/broadcasts/${id}`)).body).toMatchObject({ status: 'scheduled', scheduledAt: iso });
    // Nothing is due before the time: cancel them all, so the rest of the file has a quiet queue.
    expect((await t.api('POST', `/broadcasts/${id}/cancel`)).body).toMatchObject({ status: 'canceled', canceled: 250 });
  });
});

describe('POST /send/broadcast/message with scheduledAt', () => {
  const send = (to: string, scheduledAt: string) =>
    t.api('POST', '/send/broadcast/message', {
      headers: { 'x-service-channel-id': s.channelId },
      body: { from: { email: `news@${s.domain}` }, to: [{ email: to }], subject: 'One', text: 'Hello', scheduledAt },
    });

  it('commits the broadcast message now and shows it scheduled until its time, and refuses a bad time with 422 on /scheduledAt', async () => {
    const at = Date.now() + DAY;
    const res = await send(`eve@${RCPT_DOMAIN}`, at2(at));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const id = res.body.messageId as string;
    expect(await details(id)).toMatchObject({ status: 'scheduled', scheduledAt: new Date(at).toISOString(), mailType: 'broadcast' });
    expect((await t.daemon.store.queue.jobsOfMessage(id)).map((j) => j.dueAt)).toEqual([new Date(at).toISOString()]);
    expect((await t.api('POST', `/activity/messages/${id}/cancel`)).body).toMatchObject({ status: 'canceled' });

    const bad = await send(`fay@${RCPT_DOMAIN}`, new Date(Date.now() - 120_000).toISOString());
    expect(bad.status).toBe(422);
    expect(bad.body).toMatchObject({ code: 'validation_failed', errors: { '/scheduledAt': [{ code: 'in_past' }] } });
  });
});
