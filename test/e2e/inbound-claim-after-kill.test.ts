/**
 * A received message whose POST was in flight when the daemon died (kill -9 after the 250, the
 * app not answering yet), or was cut at the end of the shutdown's grace period, is POSTed again
 * as soon as the daemon is back, not after its claim's 5-minute lease: the node's start gives
 * back the claims it held (store/port/inbound-messages.ts releaseClaims), as delivery gives back
 * its own leases.
 */
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChildDaemon } from '../support/child-daemon.js';
import { freePort } from '../support/cli.js';
import { startDnsServer, type TestDns } from '../support/dns-server.js';
import { setupSender } from '../support/sending.js';
import { waitFor } from '../support/wait.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

/** The claim's lease (InboundPoster's default): the POST after the restart must come well before it. */
const LEASE_MS = 300_000;

let dns: TestDns;
let receiver: WebhookReceiver;
let d: ChildDaemon;
let inboundPort: number;

beforeAll(async () => {
  dns = await startDnsServer();
  receiver = await startWebhookReceiver();
  inboundPort = await freePort();
  d = new ChildDaemon({
    env: {
      POSTRIDER_DNS_SERVERS: dns.address,
      POSTRIDER_INBOUND_ENABLED: 'true',
      POSTRIDER_INBOUND_PORT: String(inboundPort),
      POSTRIDER_WEBHOOKS_ALLOW_HTTP: 'true',
      POSTRIDER_WEBHOOKS_ALLOW_PRIVATE: 'true',
    },
  });
  await d.start();
}, 60_000);

afterAll(async () => {
  await d?.close();
  await receiver?.close();
  await dns?.close();
});

async function send(to: string): Promise<string> {
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port: inboundPort, secure: false, ignoreTLS: true });
  try {
    return (await transport.sendMail({ envelope: { from: 'ann@example.org', to: [to] }, from: 'ann@example.org', to, subject: 'In flight at the crash', text: 'hello' })).response;
  } finally {
    transport.close();
  }
}

/** A route to `path` on the receiver, which hangs on the first POST there and answers the next at once. */
async function hangingRoute(local: string, path: string): Promise<string> {
  const s = await setupSender(d, dns);
  const route = await d.api('POST', '/inbound/routes', { body: { channelId: s.channelId, address: `${local}@${s.domain}`, url: receiver.url(path) } });
  expect(route.status, JSON.stringify(route.body)).toBe(200);
  receiver.on(path, (_r, index) => (index === 0 ? 'hang' : { status: 200, body: 'ok' }));
  return `${local}@${s.domain}`;
}

/** The message of the first POST to `path`, once that POST arrived. */
async function firstPost(path: string): Promise<string> {
  const [first] = await waitFor(() => receiver.at(path).length > 0 && receiver.at(path), { what: `the first POST to ${path}`, timeout: 20_000 });
  return String(first.headers['x-service-webhook-id']);
}

/** After the restart: the second POST of message `id`, within a fifth of the lease from `stoppedAt`, and the message posted. */
async function postedAgain(path: string, id: string, stoppedAt: number): Promise<void> {
  const [, again] = await d.whileAlive(() => receiver.at(path).length > 1 && receiver.at(path), { what: 'the POST after the restart', timeout: 20_000 });
  expect(again.headers['x-service-webhook-id']).toBe(id);
  expect(again.atMs - stoppedAt).toBeLessThan(LEASE_MS / 5);
  const m = await d.whileAlive(
    async () => {
      const res = await d.api('GET', `/inbound/messages/${id}`);
      return res.body.status === 'posted' && res.body;
    },
    { what: 'the message posted', timeout: 20_000 },
  );
  expect(m.attempts).toEqual([expect.objectContaining({ statusCode: 200, error: null })]);
  expect(receiver.at(path)).toHaveLength(2);
}

describe('a received message whose POST the daemon did not see answered', () => {
  it('is POSTed again at the next start after kill -9, long before the claim would have run out', async () => {
    const to = await hangingRoute('support', '/killed');
    expect(await send(to)).toMatch(/^250/);
    const id = await firstPost('/killed');
    await d.kill9();
    const killedAt = Date.now();
    await d.start();
    await postedAgain('/killed', id, killedAt);
  }, 60_000);

  it('is POSTed again at the next start after a shutdown whose grace period cut it', async () => {
    const to = await hangingRoute('sales', '/cut');
    expect(await send(to)).toMatch(/^250/);
    const id = await firstPost('/cut');
    // SIGTERM: the POST still hangs when the grace period (2 s, child-daemon.ts) ends, and is aborted.
    expect(await d.stop()).toEqual({ code: 0, signal: null });
    const stoppedAt = Date.now();
    await d.start();
    await postedAgain('/cut', id, stoppedAt);
  }, 60_000);
});
