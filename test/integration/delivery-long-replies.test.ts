/**
 * A receiving MX may send replies of any length (nodemailer reads up to 1 MiB of one; RFC 5321
 * 4.5.3.1.5 allows 512 octets a line). What is kept of one, in the events, the job's history and
 * the webhooks' payloads, is at most MAX_REPLY_LENGTH characters: a 600 KB refusal of each of
 * a message's recipients, every retry, would otherwise be written again and again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_REPLY_LENGTH } from '../../src/domain/smtp-reply.js';
import { startDeliveryRig, type DeliveryRig } from '../support/delivery-rig.js';
import { waitFor } from '../support/wait.js';

let rig: DeliveryRig;
const LONG = 'x'.repeat(600_000);

beforeAll(async () => {
  rig = await startDeliveryRig({ mx: { address: '127.0.47.3', starttls: false }, domains: ['example.net'] });
});

afterAll(() => rig?.stop());

async function send(to: string[]): Promise<string> {
  const res = await rig.t.api('POST', '/send/transactional', {
    headers: { 'x-service-channel-id': rig.s.channelId },
    body: { from: { email: `shop@${rig.s.domain}` }, to: to.map((email) => ({ email })), subject: 'Order', text: 'Thanks' },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.messageId;
}

describe('long replies of a receiving MX', () => {
  it('keeps at most MAX_REPLY_LENGTH characters of a refusal and of the final reply, in the events and the job history', async () => {
    rig.mx.scriptRcpt('gone@example.net', { code: 550, message: `5.1.1 no such user ${LONG}` });
    rig.mx.scriptData({ code: 250, message: `2.0.0 queued ${LONG}` });
    const id = await send(['gone@example.net', 'ann@example.net']);
    await waitFor(async () => (await rig.t.daemon.store.messages.get(id))?.status === 'sent', { what: 'the message sent' });

    const events = await rig.t.daemon.store.events.ofMessage(id);
    const outcomes = events.filter((e) => e.eventType === 'bounced' || e.eventType === 'delivered');
    expect(outcomes.map((e) => [e.eventType, e.recipients])).toEqual(
      expect.arrayContaining([
        ['bounced', ['gone@example.net']],
        ['delivered', ['ann@example.net']],
      ]),
    );
    for (const e of outcomes) {
      const response = (e.details as { response: string }).response;
      expect(response).toMatch(e.eventType === 'bounced' ? /^550 5\.1\.1 no such user x/ : /^250 2\.0\.0 queued x/);
      expect(response.length).toBeLessThanOrEqual(MAX_REPLY_LENGTH);
    }
    const [job] = await rig.t.daemon.store.queue.jobsOfMessage(id);
    expect(job.history.length).toBeGreaterThan(0);
    for (const h of job.history) expect(h.response!.length).toBeLessThanOrEqual(MAX_REPLY_LENGTH);
  });
});
