/**
 * POST /queue/messages/{id}/retry with delivery running: the dispatcher sleeps until the next
 * due time it planned (5 minutes after a first deferral, delivery.retrySchedule), so a retry
 * wakes it (DeliveryService.notify) and the job is attempted again right away.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { TestDaemon } from '../support/daemon.js';
import { startDeliveryRig, type DeliveryRig } from '../support/delivery-rig.js';
import type { MxServer } from '../support/mx-server.js';
import type { Sender } from '../support/sending.js';
import { waitFor } from '../support/wait.js';

let mx: MxServer;
let t: TestDaemon;
let s: Sender;
let rig: DeliveryRig | undefined;

beforeAll(async () => {
  rig = await startDeliveryRig({ mx: { address: '127.0.33.2', starttls: false }, domains: ['tarry-mail.net'] });
  ({ mx, t, s } = rig);
});

afterAll(() => rig?.stop());

async function job(messageId: string, attempts: number) {
  return waitFor(
    async () => {
      const page = (await t.api('GET', '/queue/messages?destination=tarry-mail.net')).body;
      const j = page.results.find((m: { messageId: string }) => m.messageId === messageId)?.destinations[0];
      if (!j || j.state !== 'queued' || j.attempts < attempts) throw new Error(`job is ${JSON.stringify(j)}`);
      return j;
    },
    { what: `attempt ${attempts} deferred`, timeout: 10_000 },
  );
}

it('attempts a retried job now, not at the due time the dispatcher planned', async () => {
  mx.scriptRcpt('ann@tarry-mail.net', { code: 451, message: '4.7.1 Try later' }, { code: 451, message: '4.7.1 Still later' });
  const res = await t.api('POST', '/send/transactional', {
    headers: { 'x-service-channel-id': s.channelId },
    body: { from: { email: `app@${s.domain}` }, to: [{ email: 'ann@tarry-mail.net' }], subject: 'Later', text: 'Hi' },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const first = await job(res.body.messageId, 1);
  expect(Date.parse(first.nextAttemptAt)).toBeGreaterThan(Date.now() + 60_000);
  // The dispatcher is idle once the cached connection has been closed (delivery.connectionIdleMs).
  await waitFor(() => mx.quits >= 1, { what: 'the idle connection closed' });

  const retried = await t.api('POST', `/queue/messages/${res.body.messageId}/retry`);
  expect(retried.status).toBe(200);
  const second = await job(res.body.messageId, 2);
  expect(second.lastReply).toMatchObject({ smtpCode: 451, response: expect.stringContaining('Still later') });
  expect(mx.rcpts.filter((r) => r === 'ann@tarry-mail.net')).toHaveLength(2);
});
