/**
 * A sandbox send whose composition fails after the commit (src/submission/finishing.ts): its
 * template renders a message over smtp.maxMessageSize, known only once composed, after the 200.
 * On a sandbox channel it ends as it would on a live one, with the failure only: the simulated
 * outcome waits for the composition (domain/sandbox-outcome.ts), so the activity API and the
 * webhook deliveries never show a simulated `delivered` followed by the `bounced` of the failure.
 * A sandbox send that composes still gets its simulated delivery.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_TYPES } from '../../src/domain/types.js';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import type { TestDns } from '../support/dns-server.js';
import { SQUARED_TEMPLATE, sendFrom, setupSender, type Sender } from '../support/sending.js';
import { waitFor } from '../support/wait.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

const MAX = 64 * 1024;
const HOOK = '/sandbox-hook';

let t: TestDaemon;
let rx: WebhookReceiver;
let s: Sender;

beforeAll(async () => {
  rx = await startWebhookReceiver();
  t = await startDaemon({ 'smtp.maxMessageSize': MAX, 'webhooks.allowHttp': true, 'webhooks.allowPrivate': true });
  s = await setupSender(t, undefined as unknown as TestDns, { deliveryType: 'sandbox', verify: false });
  const hook = await t.api('POST', '/webhooks', { body: { url: rx.url(HOOK), channelId: s.channelId, events: [...EVENT_TYPES] } });
  expect(hook.status, JSON.stringify(hook.body)).toBe(200);
});

afterAll(async () => {
  await t?.stop();
  await rx?.close();
});

const squared = SQUARED_TEMPLATE;
const send = (to: string[], body: Record<string, unknown>): Promise<string> => sendFrom(t, s, to, body);

const hooked = (id: string) => rx.at(HOOK).filter((r) => r.json.messageId === id).map((r) => r.json.eventType as string);

describe('a sandbox send that cannot be composed after its commit', () => {
  it('ends with its failure only, in the activity API and the webhook deliveries: no simulated delivery first', async () => {
    const rcpts = ['ann@example.net', 'gone@bounce.postrider.invalid'];
    const id = await send(rcpts, { template: squared });

    const details = await waitFor(
      async () => {
        const res = await t.api('GET', `/activity/messages/${id}`);
        return res.body.events.filter((e: { eventType: string }) => e.eventType === 'bounced').length >= 2 ? res.body : undefined;
      },
      { what: 'the message ended as bounced', timeout: 20_000 },
    );
    expect(details.status).toBe('sent');
    expect(details.events.map((e: { eventType: string }) => e.eventType)).toEqual(['accepted', 'processed', 'bounced', 'bounced']);
    for (const e of details.events.filter((x: { eventType: string }) => x.eventType === 'bounced')) {
      expect(e.details).toMatchObject({ bounceType: 'hard', category: 'message_too_large', enhancedCode: '5.3.4' });
      expect(e.details.simulated).toBeUndefined();
    }
    const log = await t.api('GET', `/activity/events?messageId=${id}`);
    expect(log.body.results.map((e: { eventType: string }) => e.eventType)).toEqual(['accepted', 'processed', 'bounced', 'bounced']);
    // Nothing was delivered, so nothing suppressed either (the simulated bounce's address is not at fault).
    const sup = await t.api('GET', `/suppressions?channelId=${s.channelId}&mailType=transactional`);
    expect(sup.body.results).toEqual([]);

    // A sandbox send that composes, after it: its simulated delivery reaches the webhook, so
    // every event of the first message recorded before it has been delivered too.
    const ok = await send(['cy@example.net'], { subject: 'Fine', text: 'Hello' });
    await waitFor(() => hooked(ok).includes('delivered') && hooked(id).filter((x) => x === 'bounced').length === 2, { what: 'the webhook deliveries', timeout: 20_000 });
    expect(hooked(id).sort()).toEqual(['accepted', 'bounced', 'bounced', 'processed']);
    expect(hooked(ok)).toEqual(['accepted', 'processed', 'delivered']);
  });
});
