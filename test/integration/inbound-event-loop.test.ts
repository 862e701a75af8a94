/**
 * Issue 33, "a 25 MB attachment, 10,000 tiny parts": processing such a message after its 250
 * (verify, parse, JSON, signed POST) must not stall the daemon's main thread, where the HTTP API,
 * the SMTP listeners and the delivery scheduler run. The message is committed while the poster is
 * stopped, then the poster starts under perf_hooks' event-loop delay histogram, which is read
 * once the message is posted. The receiver only counts bytes (a JSON.parse of 34 MB in this
 * process would be measured too); the body is checked after the histogram is closed.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InboundMessage } from '../../src/domain/inbound-message.js';
import { startDaemonWithDns, stopDaemonWithDns, type TestDaemon } from '../support/daemon.js';
import type { TestDns } from '../support/dns-server.js';
import { newChannel, newVerifiedDomain, uniqueName } from '../support/domains.js';
import { waitFor } from '../support/wait.js';

/**
 * The longest the main thread may be held: above what a loaded 2-core test machine adds by itself
 * (measured 21-45 ms on either engine alone; 59-241 ms on PostgreSQL with the machine at load 11,
 * where the test process also waits for a core; 477 ms once in CI, beside another test file,
 * before LMDB's read of the 34 MB and mailauth's loading were taken off the poster's first
 * attempt), below what the work on the main thread took before it was cut up (577 ms on LMDB,
 * 840 ms on PostgreSQL reading the raw bytes in one statement; see post-attempt.ts,
 * store/lmdb/bytes-in-turns.ts and store/postgres/repos/inbound-messages.ts).
 */
const MAX_DELAY_MS = 400;
const MB = 1_000_000;

interface CountingReceiver {
  url: string;
  bodies: Buffer[][];
  close(): Promise<void>;
}

/** A receiver that keeps the chunks of each body as they come and answers 200, nothing more. */
async function countingReceiver(): Promise<CountingReceiver> {
  const bodies: Buffer[][] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      bodies.push(chunks);
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/in`,
    bodies,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

let t: TestDaemon;
let dns: TestDns;
let receiver: CountingReceiver;
let domain: string;

beforeAll(async () => {
  receiver = await countingReceiver();
  ({ t, dns } = await startDaemonWithDns({
    'inbound.enabled': true,
    'inbound.port': 0,
    'webhooks.allowHttp': true,
    'webhooks.allowPrivate': true,
    // Inlined, so the JSON body carries the 25 MB in base64: the largest body the poster builds.
    'inbound.attachmentInlineMax': 30 * MB,
  }));
  const channelId = await newChannel(t);
  domain = (await newVerifiedDomain(t, dns, { name: uniqueName('loop'), channelIds: [channelId] })).name;
  const res = await t.api('POST', '/inbound/routes', { body: { channelId, address: `*@${domain}`, url: receiver.url } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}, 60_000);

afterAll(async () => {
  await stopDaemonWithDns({ t, dns });
  await receiver?.close();
});

async function deliver(raw: Buffer | string, to: string): Promise<void> {
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port: t.daemon.inbound!.port, secure: false, ignoreTLS: true });
  try {
    const info = await transport.sendMail({ envelope: { from: 'ann@example.org', to: [to] }, raw });
    expect(info.response).toMatch(/^250/);
  } finally {
    transport.close();
  }
}

async function messageTo(to: string): Promise<InboundMessage | undefined> {
  const { results } = await t.daemon.store.inboundMessages.list({ accountId: t.accountId, limit: 50 });
  return results.find((m) => m.envelope.rcptTo.includes(to));
}

/**
 * Commits the message with the poster stopped, then starts it and measures the main thread's
 * event-loop delay until the message is posted; answers the longest delay in ms and the body.
 */
async function processedUnderMonitor(raw: Buffer | string, to: string): Promise<{ maxDelayMs: number; body: Buffer }> {
  const poster = t.daemon.inboundPoster!;
  await poster.stop();
  await deliver(raw, to);
  const before = receiver.bodies.length;
  const histogram = monitorEventLoopDelay({ resolution: 10 });
  histogram.enable();
  await poster.start();
  poster.notify();
  const m = await waitFor(async () => ((await messageTo(to))?.status === 'posted' ? messageTo(to) : undefined), { what: `the message to ${to} posted`, timeout: 60_000 });
  histogram.disable();
  expect(m!.attempts).toHaveLength(1);
  expect(receiver.bodies.length).toBe(before + 1);
  return { maxDelayMs: histogram.max / 1e6, body: Buffer.concat(receiver.bodies[before]) };
}

/** A message with one attachment of `size` random-looking bytes (nodemailer's base64, RFC 2045 6.8). */
async function withAttachment(to: string, size: number): Promise<Buffer> {
  const content = Buffer.alloc(size);
  for (let i = 0; i < size; i += 4) content.writeUInt32LE((i * 2654435761) >>> 0, i);
  const { default: MailComposer } = await import('nodemailer/lib/mail-composer/index.js');
  return new MailComposer({ from: 'ann@example.org', to, subject: 'Big file', text: 'See attached.', attachments: [{ filename: 'big.bin', content }] }).compile().build();
}

/** 10,000 one-line parts (issue 33's "10,000 tiny parts"). */
function tinyParts(to: string): string {
  const parts = Array.from({ length: 10_000 }, (_, i) => `--b\r\nContent-Type: text/plain\r\n\r\npart ${i}\r\n`).join('');
  return `From: ann@example.org\r\nTo: ${to}\r\nSubject: Tiny parts\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n${parts}--b--\r\n`;
}

describe('the main thread while a big received message is processed', () => {
  it('keeps its event loop turning while a 25 MB attachment is parsed and posted inline', async () => {
    const to = `big@${domain}`;
    const { maxDelayMs, body } = await processedUnderMonitor(await withAttachment(to, 25 * MB), to);
    console.info(`inbound 25 MB attachment: max event-loop delay ${maxDelayMs.toFixed(1)} ms, body ${body.length} bytes`);
    const json = JSON.parse(body.toString('utf8'));
    expect(json.attachments).toMatchObject([{ filename: 'big.bin', size: 25 * MB }]);
    expect(json.attachments[0].content.length).toBe(Math.ceil((25 * MB) / 3) * 4);
    expect(maxDelayMs).toBeLessThan(MAX_DELAY_MS);
  }, 120_000);

  // 179 ms with the parse on the main thread, 21 ms in the pool: under the bound either way, so
  // this one guards against worse, while the test above is the one that failed before.
  it('keeps its event loop turning while the 25 MB attachment is read for its link', async () => {
    const m = (await messageTo(`big@${domain}`))!;
    const histogram = monitorEventLoopDelay({ resolution: 10 });
    histogram.enable();
    const res = await fetch(`${t.url}/inbound/messages/${m.id}/attachments/0`, { headers: { authorization: `Bearer ${t.apiKey}` } });
    let size = 0;
    for await (const chunk of res.body!) size += (chunk as Uint8Array).byteLength;
    histogram.disable();
    const maxDelayMs = histogram.max / 1e6;
    console.info(`inbound 25 MB attachment link: max event-loop delay ${maxDelayMs.toFixed(1)} ms`);
    expect(res.status).toBe(200);
    expect(size).toBe(25 * MB);
    expect(maxDelayMs).toBeLessThan(MAX_DELAY_MS);
  }, 120_000);

  it('keeps its event loop turning while a message of 10,000 tiny parts is parsed and posted', async () => {
    const to = `parts@${domain}`;
    const { maxDelayMs, body } = await processedUnderMonitor(tinyParts(to), to);
    console.info(`inbound 10,000 parts: max event-loop delay ${maxDelayMs.toFixed(1)} ms, body ${body.length} bytes`);
    expect(JSON.parse(body.toString('utf8'))).toMatchObject({ subject: 'Tiny parts', parseError: expect.stringContaining('500 parts') });
    expect(maxDelayMs).toBeLessThan(MAX_DELAY_MS);
  }, 120_000);
});
