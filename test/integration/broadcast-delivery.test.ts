/**
 * Broadcasts through the real dispatcher: HTTP → expansion → LMDB queue → delivery to smtp-server
 * MXs on 127.0.21.x (found through the test DNS server). Status, completion and statistics
 * follow what delivery records; a cancel leaves a job that is being delivered alone.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeliveryJob } from '../../src/domain/types.js';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import { deliverySettings, routeTo } from '../support/delivery-rig.js';
import { startDnsServer, type TestDns } from '../support/dns-server.js';
import { startMxServer, type MxServer } from '../support/mx-server.js';
import { setupSender, type Sender } from '../support/sending.js';
import { waitFor } from '../support/wait.js';

let dns: TestDns;
let fast: MxServer;
/** Holds every DATA reply, so a delivery stays in flight long enough to cancel meanwhile. */
let slow: MxServer;
let t: TestDaemon;
let s: Sender;

beforeAll(async () => {
  dns = await startDnsServer();
  fast = await startMxServer({ address: '127.0.21.2', starttls: false });
  slow = await startMxServer({ address: '127.0.21.3', port: fast.port, starttls: false, dataDelayMs: 1_500 });
  routeTo(dns, 'fast-mail.net', '127.0.21.2');
  routeTo(dns, 'slow-mail.net', '127.0.21.3');
  t = await startDaemon(deliverySettings(dns.address, fast.port));
  s = await setupSender(t, dns);
});

afterAll(async () => {
  await t?.stop();
  await fast?.close();
  await slow?.close();
  await dns?.close();
});

async function broadcast(to: string[]): Promise<string> {
  const res = await t.api('POST', '/send/broadcast', {
    headers: { 'x-service-channel-id': s.channelId },
    body: { from: { email: `news@${s.domain}` }, template: { subject: 'News', text: 'Hello' }, messages: to.map((email) => ({ to: [{ email }] })) },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.broadcastId;
}

/** Polls GET /broadcasts/{id} until `until` holds (the sentinel of these tests). */
async function broadcastWhen(id: string, until: (b: any) => boolean): Promise<any> {
  return waitFor(
    async () => {
      const b = (await t.api('GET', `/broadcasts/${id}`)).body;
      if (!until(b)) throw new Error(`broadcast is still ${JSON.stringify(b)}`);
      return b;
    },
    { what: `broadcast ${id} to reach the awaited state`, timeout: 15_000 },
  );
}

async function jobsOfBroadcast(id: string): Promise<DeliveryJob[]> {
  const ids = (await t.daemon.store.messages.all()).filter((m) => m.broadcastId === id).map((m) => m.id);
  return (await Promise.all(ids.map((messageId) => t.daemon.store.queue.jobsOfMessage(messageId)))).flat();
}

describe('broadcasts through the dispatcher', () => {
  it('is completed once every message is delivered, with its statistics', async () => {
    const id = await broadcast(['ann@fast-mail.net', 'bob@fast-mail.net']);
    const done = await broadcastWhen(id, (b) => b.status === 'completed');
    expect(done).toMatchObject({ completion: '100%', messages: 2, failed: 0, canceled: 0, statistics: { sent: 2, delivered: 2, bounced: 0 } });
    expect(fast.received.flatMap((r) => r.to).sort()).toEqual(['ann@fast-mail.net', 'bob@fast-mail.net']);
  });

  it('lets a delivery that is in flight when the broadcast is canceled finish normally', async () => {
    const id = await broadcast(['cy@slow-mail.net']);
    await waitFor(async () => (await jobsOfBroadcast(id)).some((j) => j.state === 'leased'), { what: 'the job leased by the dispatcher' });
    const canceled = await t.api('POST', `/broadcasts/${id}/cancel`);
    expect(canceled.status).toBe(200);
    expect(canceled.body).toMatchObject({ status: 'canceled', canceled: 0 });
    const after = await broadcastWhen(id, (b) => b.statistics.delivered === 1);
    expect(after).toMatchObject({ status: 'canceled', completion: '100%', canceled: 0, statistics: { sent: 1, delivered: 1, bounced: 0 } });
    expect(await jobsOfBroadcast(id)).toEqual([expect.objectContaining({ state: 'done', attempts: 1 })]);
    expect((await jobsOfBroadcast(id))[0].canceledAt).toBeUndefined();
    expect(slow.received.flatMap((r) => r.to)).toEqual(['cy@slow-mail.net']);
  });
});
