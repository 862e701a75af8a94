/**
 * How many received messages one node processes at once (issue 33): at most inbound.concurrency,
 * and fewer when messages as large as inbound.maxMessageSize could take up the poster's byte
 * budget (256 MiB of raw bytes in flight): there, one at a time. Measured at a receiver that
 * holds every POST open and answers them one by one, only once as many are open as the poster
 * should allow, so a poster that let more through would be seen with more open.
 */
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type TestDaemon } from '../support/daemon.js';
import { startDnsServer, type TestDns } from '../support/dns-server.js';
import { newChannel, newVerifiedDomain, uniqueName } from '../support/domains.js';
import { waitFor } from '../support/wait.js';
import { startWebhookReceiver, type Answer, type WebhookReceiver } from '../support/webhook-receiver.js';

const MESSAGES = 6;
let dns: TestDns;
let receiver: WebhookReceiver;
const daemons: TestDaemon[] = [];

beforeAll(async () => {
  dns = await startDnsServer();
  receiver = await startWebhookReceiver();
});

afterAll(async () => {
  await Promise.all(daemons.map((d) => d.stop()));
  await receiver?.close();
  await dns?.close();
});

async function daemonWith(overrides: Record<string, unknown>): Promise<TestDaemon> {
  const t = await startDaemon({ 'inbound.enabled': true, 'inbound.port': 0, 'webhooks.allowHttp': true, 'webhooks.allowPrivate': true, 'dns.servers': [dns.address], ...overrides });
  daemons.push(t);
  return t;
}

/** Holds every POST to `path` open; answers one (200) whenever `limit` are open or every message has arrived; the most seen open at once. */
async function mostOpenAtOnce(t: TestDaemon, path: string, limit: number): Promise<number> {
  const open: Array<(a: Answer) => void> = [];
  let most = 0;
  receiver.on(path, () => new Promise<Answer>((resolve) => {
    open.push(resolve);
    most = Math.max(most, open.length);
  }));
  const channelId = await newChannel(t);
  const domain = (await newVerifiedDomain(t, dns, { name: uniqueName('in'), channelIds: [channelId] })).name;
  const route = await t.api('POST', '/inbound/routes', { body: { channelId, address: `*@${domain}`, url: receiver.url(path) } });
  expect(route.status, JSON.stringify(route.body)).toBe(200);
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port: t.daemon.inbound!.port, secure: false, ignoreTLS: true, pool: true });
  try {
    for (let i = 0; i < MESSAGES; i++) await transport.sendMail({ envelope: { from: 'a@example.org', to: [`m${i}@${domain}`] }, raw: `Subject: ${i}\r\n\r\nbody ${i}\r\n` });
  } finally {
    transport.close();
  }
  for (let answered = 0; answered < MESSAGES; answered++) {
    await waitFor(() => open.length >= limit || (receiver.at(path).length === MESSAGES && open.length > 0), { what: `${limit} POSTs open, or the last ones` });
    open.shift()!({ status: 200 });
  }
  return most;
}

describe('received messages in flight', () => {
  it('are at most inbound.concurrency, and reach it', async () => {
    const t = await daemonWith({ 'inbound.concurrency': 2 });
    expect(await mostOpenAtOnce(t, '/two', 2)).toBe(2);
  });

  it('are one at a time when messages of inbound.maxMessageSize would take the byte budget', async () => {
    const t = await daemonWith({ 'inbound.concurrency': 8, 'inbound.maxMessageSize': 512 * 1024 * 1024 });
    expect(await mostOpenAtOnce(t, '/big', 1)).toBe(1);
  });
});
