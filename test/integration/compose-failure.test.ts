/**
 * A send whose composition fails after the commit (src/submission/finishing.ts): the template
 * passes the intake check and the size estimate, but its data renders a message over
 * smtp.maxMessageSize, which is known only once composed, after the 200. The message ends with a
 * permanent bounced event per recipient that says why, its details show it, nothing is
 * delivered, and no recipient is suppressed (the address is not at fault).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestDaemon } from '../support/daemon.js';
import { startDeliveryRig, type DeliveryRig } from '../support/delivery-rig.js';
import type { MxServer } from '../support/mx-server.js';
import { SQUARED_TEMPLATE, sendFrom, type Sender } from '../support/sending.js';
import { waitFor } from '../support/wait.js';

const RCPT_DOMAIN = 'composed-mail.net';
const MAX = 64 * 1024;

let mx: MxServer;
let t: TestDaemon;
let s: Sender;
let rig: DeliveryRig | undefined;

beforeAll(async () => {
  rig = await startDeliveryRig({ mx: { address: '127.0.24.3', starttls: false }, domains: [RCPT_DOMAIN], daemon: { 'smtp.maxMessageSize': MAX } });
  ({ mx, t, s } = rig);
});

afterAll(() => rig?.stop());

const squared = SQUARED_TEMPLATE;
const send = (to: string[], body: Record<string, unknown>): Promise<string> => sendFrom(t, s, to, body);

describe('a message that cannot be composed after its commit', () => {
  it('ends with a permanent bounced event per recipient that says why, shown in its details; nothing is delivered or suppressed', async () => {
    const rcpts = [`ann@${RCPT_DOMAIN}`, 'bob@elsewhere-mail.org'];
    const id = await send(rcpts, { template: squared });

    const details = await waitFor(
      async () => {
        const res = await t.api('GET', `/activity/messages/${id}`);
        return res.body.status === 'sent' && res.body.events.filter((e: { eventType: string }) => e.eventType === 'bounced').length === 2 ? res.body : undefined;
      },
      { what: 'the message ended as bounced', timeout: 20_000 },
    );
    const bounced = details.events.filter((e: { eventType: string }) => e.eventType === 'bounced');
    expect(bounced.map((e: { recipients: string[] }) => e.recipients[0]).sort()).toEqual(rcpts.sort());
    for (const e of bounced) {
      expect(e.details).toMatchObject({ bounceType: 'hard', category: 'message_too_large', enhancedCode: '5.3.4' });
      expect(e.details.reason).toMatch(/^The message could not be composed: the composed message is \d+ bytes; at most 65536 are accepted$/);
      expect(e.details.reason).not.toMatch(/\n\s+at /);
    }
    expect((await t.daemon.store.messages.isUnfinished(id))).toBe(false);
    expect(details.body).toBeUndefined();

    // The activity log lists it like any bounce.
    const log = await t.api('GET', `/activity/events?messageId=${id}&eventTypes=bounced`);
    expect(log.status, JSON.stringify(log.body)).toBe(200);
    expect(log.body.results).toHaveLength(2);

    // Statistics count it like any bounce.
    const totals = await t.api('GET', `/statistics/totals?channelId=${s.channelId}`);
    expect(totals.body.transactional).toMatchObject({ sent: 2, bounced: 2, delivered: 0 });

    // Not the recipients' fault: no suppression.
    const sup = await t.api('GET', `/suppressions?channelId=${s.channelId}&mailType=transactional`);
    expect(sup.status, JSON.stringify(sup.body)).toBe(200);
    expect(sup.body.results).toEqual([]);

    // A message that composes still goes; the one that could not be composed never arrived.
    const ok = await send([`cy@${RCPT_DOMAIN}`], { subject: 'Fine', text: 'Hello' });
    await waitFor(() => mx.received.find((m) => m.to.includes(`cy@${RCPT_DOMAIN}`)), { what: 'the good message delivered', timeout: 15_000 });
    expect(ok).not.toBe(id);
    expect(mx.received.some((m) => m.to.includes(`ann@${RCPT_DOMAIN}`))).toBe(false);
  });

  it('ends all the same when the daemon restarts between its tries: the count of failed tries is kept with the message', async () => {
    const id = await send([`dee@${RCPT_DOMAIN}`], { template: squared });
    const kept = async () => (await t.daemon.store.messages.unfinished(id))?.failures?.same ?? 0;
    // Each restart tries again at once, sooner than the stage's own retry (2 s): before the count
    // was kept, such restarts started it over and the message never ended.
    for (let run = 1; run <= 2; run++) {
      await waitFor(async () => (await kept()) >= run, { what: `failed try ${run} kept`, timeout: 15_000 });
      await t.restart();
    }
    await waitFor(
      async () => {
        const res = await t.api('GET', `/activity/messages/${id}`);
        return res.body.status === 'sent' && res.body.events.some((e: { eventType: string }) => e.eventType === 'bounced') ? res.body : undefined;
      },
      { what: 'the message ended as bounced', timeout: 20_000 },
    );
    expect((await t.daemon.store.messages.isUnfinished(id))).toBe(false);
  });
});
