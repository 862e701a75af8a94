/**
 * A received message whose POST was in flight when the daemon died (kill -9 after the 250, the
 * app not answering yet) is POSTed again as soon as the daemon is back, not after its claim's
 * 5-minute lease: the node's start gives back the claims it held (store/port/inbound-messages.ts
 * releaseClaims), as delivery gives back its own leases.
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

describe('kill -9 while a received message is being POSTed', () => {
  it('POSTs it again at the next start, long before the claim would have run out', async () => {
    const s = await setupSender(d, dns);
    const route = await d.api('POST', '/inbound/routes', { body: { channelId: s.channelId, address: `support@${s.domain}`, url: receiver.url('/app') } });
    expect(route.status, JSON.stringify(route.body)).toBe(200);
    // The app hangs on the first POST (the daemon dies under it), and answers the next at once.
    receiver.on('/app', (_r, index) => (index === 0 ? 'hang' : { status: 200, body: 'ok' }));

    expect(await send(`support@${s.domain}`)).toMatch(/^250/);
    const [first] = await waitFor(() => receiver.at('/app').length > 0 && receiver.at('/app'), { what: 'the first POST to the app', timeout: 20_000 });
    const id = String(first.headers['x-service-webhook-id']);
    await d.kill9();
    const killedAt = Date.now();

    await d.start();
    const [, again] = await d.whileAlive(() => receiver.at('/app').length > 1 && receiver.at('/app'), { what: 'the POST after the restart', timeout: 20_000 });
    expect(again.headers['x-service-webhook-id']).toBe(id);
    expect(again.atMs - killedAt).toBeLessThan(LEASE_MS / 5);
    const m = await d.whileAlive(
      async () => {
        const res = await d.api('GET', `/inbound/messages/${id}`);
        return res.body.status === 'posted' && res.body;
      },
      { what: 'the message posted', timeout: 20_000 },
    );
    expect(m.attempts).toEqual([expect.objectContaining({ statusCode: 200, error: null })]);
    expect(receiver.at('/app')).toHaveLength(2);
  }, 60_000);
});
