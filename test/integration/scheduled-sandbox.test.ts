/**
 * Scheduled sends on a sandbox channel through the real daemon (issue 34): a sandbox channel
 * takes mail exactly as a live one does, but keeps it. A scheduled sandbox message shows
 * `scheduled` until its time, can be canceled and moved, and gets its simulated outcome
 * (delivered, or the simulated bounce of bounce.postrider.invalid) at its time, not before, with
 * no connection: the recipient domain is routed to a real MX, which must see none. A scheduled
 * broadcast on a sandbox channel follows the same rule.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestDaemon } from '../support/daemon.js';
import { startDeliveryRig, type DeliveryRig } from '../support/delivery-rig.js';
import type { MxServer } from '../support/mx-server.js';
import { setupSender, type Sender } from '../support/sending.js';
import { waitFor } from '../support/wait.js';

const RCPT_DOMAIN = 'sandbox-later.net';
const BOUNCE = 'gone@bounce.postrider.invalid';
const DAY = 86_400_000;

let mx: MxServer;
let t: TestDaemon;
let sandbox: Sender;
let rig: DeliveryRig | undefined;

beforeAll(async () => {
  rig = await startDeliveryRig({ mx: { address: '127.0.25.4', starttls: false }, domains: [RCPT_DOMAIN] });
  ({ mx, t } = rig);
  sandbox = await setupSender(t, rig.dns, { deliveryType: 'sandbox' });
});

afterAll(async () => {
  // Nothing of this file's mail left the machine: the MX, where RCPT_DOMAIN's mail would go, saw no session.
  if (mx) expect(mx.connections).toBe(0);
  await rig?.stop();
});

function send(to: string[], scheduledAt?: string) {
  return t.api('POST', '/send/transactional', {
    headers: { 'x-service-channel-id': sandbox.channelId },
    body: { from: { email: `app@${sandbox.domain}` }, to: to.map((email) => ({ email })), subject: 'Later', text: 'Hello', ...(scheduledAt !== undefined && { scheduledAt }) },
  });
}

type Event = { eventType: string; timestamp: string; recipients: string[]; details: Record<string, unknown> };
const details = async (id: string) => (await t.api('GET', `/activity/messages/${id}`)).body as { status: string; scheduledAt?: string; events: Event[] };
const eventOf = (id: string, type: string) => waitFor(async () => (await details(id)).events.find((e) => e.eventType === type), { what: `the ${type} event of ${id}`, timeout: 15_000 });

describe('a scheduled send on a sandbox channel', () => {
  it('shows scheduled, then gets its simulated delivery and bounce at its time, not before, without a connection', async () => {
    const at = new Date(Date.now() + 2000);
    const res = await send([`ann@${RCPT_DOMAIN}`, BOUNCE], at.toISOString().replace('Z', '+00:00'));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const id = res.body.messageId as string;
    const before = await details(id);
    expect(before).toMatchObject({ status: 'scheduled', scheduledAt: at.toISOString() });
    expect(before.events.map((e) => e.eventType)).toEqual(['accepted', 'processed']);
    const list = await t.api('GET', `/activity/messages?channelId=${sandbox.channelId}`);
    expect(list.body.results.find((m: { messageId: string }) => m.messageId === id)).toMatchObject({ status: 'scheduled', deliveryType: 'sandbox' });

    const delivered = await eventOf(id, 'delivered');
    expect(Date.parse(delivered.timestamp)).toBeGreaterThanOrEqual(at.getTime());
    expect(delivered).toMatchObject({ recipients: [`ann@${RCPT_DOMAIN}`], details: { simulated: true, smtpCode: 250, response: '250 2.0.0 OK (sandbox)' } });
    const bounced = await eventOf(id, 'bounced');
    expect(Date.parse(bounced.timestamp)).toBeGreaterThanOrEqual(at.getTime());
    expect(bounced).toMatchObject({ recipients: [BOUNCE], details: { simulated: true, bounceType: 'hard', smtpCode: 550, response: '550 5.1.1 simulated bounce (sandbox)' } });
    await waitFor(async () => (await details(id)).status === 'sent', { what: 'the message to be sent' });
    expect(await t.daemon.store.suppressions.is(sandbox.channelId, 'transactional', BOUNCE)).toBe(true);
    expect(mx.connections).toBe(0);
  });

  it('cancels a scheduled sandbox message: canceled, no outcome, no suppression; a second cancel is 409', async () => {
    const id = (await send([`bob@${RCPT_DOMAIN}`], new Date(Date.now() + DAY).toISOString())).body.messageId as string;
    const cancel = await t.api('POST', `/activity/messages/${id}/cancel`);
    expect(cancel.status, JSON.stringify(cancel.body)).toBe(200);
    expect(cancel.body).toMatchObject({ messageId: id, status: 'canceled' });
    const after = await details(id);
    expect(after.status).toBe('canceled');
    expect(after.events.map((e) => e.eventType)).toEqual(['accepted', 'processed', 'canceled']);
    const again = await t.api('POST', `/activity/messages/${id}/cancel`);
    expect([again.status, again.body.code]).toEqual([409, 'conflict']);
  });

  it('moves a scheduled sandbox message earlier with PATCH and simulates it at the new time', async () => {
    const id = (await send([`cy@${RCPT_DOMAIN}`], new Date(Date.now() + DAY).toISOString())).body.messageId as string;
    const at = new Date(Date.now() + 1500);
    const moved = await t.api('PATCH', `/activity/messages/${id}`, { body: { scheduledAt: at.toISOString() } });
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    expect(moved.body).toMatchObject({ messageId: id, status: 'scheduled', scheduledAt: at.toISOString() });
    const delivered = await eventOf(id, 'delivered');
    expect(Date.parse(delivered.timestamp)).toBeGreaterThanOrEqual(at.getTime());
    expect(delivered.details).toMatchObject({ simulated: true });
    const late = await t.api('POST', `/activity/messages/${id}/cancel`);
    expect([late.status, late.body.code]).toEqual([409, 'conflict']);
  });

  it('simulates a sandbox message sent now once it is composed, as before, with no wait for a time', async () => {
    const res = await send([`dee@${RCPT_DOMAIN}`]);
    await eventOf(res.body.messageId as string, 'delivered');
    const now = await details(res.body.messageId as string);
    expect(now.status).toBe('sent');
    expect(now.events.map((e) => e.eventType)).toEqual(['accepted', 'processed', 'delivered']);
  });
});

describe('a scheduled broadcast on a sandbox channel', () => {
  it('shows its messages scheduled, then simulates each at the time and completes', async () => {
    const at = Date.now() + 2500;
    const to = [`eve@${RCPT_DOMAIN}`, BOUNCE.replace('gone', 'gone2')];
    const res = await t.api('POST', '/send/broadcast', {
      headers: { 'x-service-channel-id': sandbox.channelId },
      body: { from: { email: `news@${sandbox.domain}` }, template: { subject: 'Later', text: 'Hello' }, messages: to.map((email) => ({ to: [{ email }] })), scheduledAt: new Date(at).toISOString() },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const id = res.body.broadcastId as string;
    await t.daemon.submission.expander.drain();
    expect((await t.api('GET', `/broadcasts/${id}`)).body).toMatchObject({ status: 'scheduled', messages: 2 });
    const msgs = (await t.daemon.store.messages.all()).filter((m) => m.broadcastId === id);
    expect(msgs).toHaveLength(2);
    for (const m of msgs) expect((await details(m.id)).status).toBe('scheduled');
    for (const m of msgs) {
      const outcome = await eventOf(m.id, m.recipients[0] === to[0] ? 'delivered' : 'bounced');
      expect(Date.parse(outcome.timestamp)).toBeGreaterThanOrEqual(at);
      expect(outcome.details).toMatchObject({ simulated: true });
    }
    await waitFor(async () => ((await t.api('GET', `/broadcasts/${id}`)).body.status === 'completed' ? true : undefined), { what: 'the broadcast to complete' });
  });
});
