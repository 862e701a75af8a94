/**
 * The daemon's main thread while one large message goes in (issue 36, "never frozen by one
 * input"): an 18 MB attachment over SMTP submission (STARTTLS + AUTH) and over HTTP
 * (POST /send/transactional, 24 MB of JSON), each measured with perf_hooks' event-loop delay
 * histogram from the request until 3 s after its answer (the finishing stage signs it meanwhile).
 * The daemon runs in this process (test/support/daemon.ts, real LMDB in a temp folder, real
 * worker pool, test DNS), so the client's own work is inside the histogram too: the message is
 * built before the histogram starts, and what the client does meanwhile is writing it to a socket.
 * A measurement, not a test: it prints and asserts nothing about time.
 *
 *   npm run build && npx vitest run --config bench/vitest.large-messages.config.ts
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, it } from 'vitest';
import { startDaemonWithDns, stopDaemonWithDns, type TestDaemon } from '../test/support/daemon.js';
import type { TestDns } from '../test/support/dns-server.js';
import { setupSender, type Sender } from '../test/support/sending.js';

const ATTACHMENT_BYTES = 18_000_000;
const ROUNDS = Number(process.env.ROUNDS ?? 2);

let t: TestDaemon;
let dns: TestDns;
let s: Sender;

beforeAll(async () => {
  ({ t, dns } = await startDaemonWithDns({ 'smtp.enabled': true, 'smtp.port': 0, 'smtp.maxMessageSize': 30_000_000 }));
  s = await setupSender(t, dns);
}, 60_000);

afterAll(() => stopDaemonWithDns({ t, dns }));

function content(size: number): Buffer {
  const c = Buffer.alloc(size);
  for (let i = 0; i + 4 <= size; i += 4) c.writeUInt32LE((i * 2654435761) >>> 0, i);
  return c;
}

async function measured(what: string, send: () => Promise<void>): Promise<void> {
  const h = monitorEventLoopDelay({ resolution: 5 });
  h.enable();
  const t0 = performance.now();
  await send();
  const answered = performance.now() - t0;
  await new Promise((resolve) => setTimeout(resolve, 3000));
  h.disable();
  console.info(`${what}: longest event-loop delay ${(h.max / 1e6).toFixed(1)} ms, p99 ${(h.percentile(99) / 1e6).toFixed(1)} ms; answered after ${answered.toFixed(0)} ms`);
}

it('SMTP submission of an 18 MB attachment', async () => {
  const { default: MailComposer } = await import('nodemailer/lib/mail-composer/index.js');
  const raw = await new MailComposer({ from: `app@${s.domain}`, to: 'alice@example.net', subject: 'Large', text: 'Attached.', attachments: [{ filename: 'large.bin', content: content(ATTACHMENT_BYTES) }] }).compile().build();
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port: t.daemon.smtp!.port, secure: false, requireTLS: true, tls: { rejectUnauthorized: false }, auth: { user: s.channelId, pass: t.apiKey } } as Parameters<typeof nodemailer.createTransport>[0]);
  await transport.verify();
  for (let r = 0; r < ROUNDS; r++) {
    await measured(`smtp, ${raw.length} bytes`, async () => {
      await transport.sendMail({ envelope: { from: `app@${s.domain}`, to: ['alice@example.net'] }, raw });
    });
  }
  transport.close();
}, 300_000);

it('HTTP send of an 18 MB attachment', async () => {
  const body = JSON.stringify({ from: { email: `app@${s.domain}` }, to: [{ email: 'alice@example.net' }], subject: 'Large', text: 'Attached.', attachments: [{ content: content(ATTACHMENT_BYTES).toString('base64'), fileName: 'large.bin' }] });
  for (let r = 0; r < ROUNDS; r++) {
    await measured(`http, ${body.length} bytes of JSON`, async () => {
      const res = await fetch(`${t.url}/send/transactional`, { method: 'POST', headers: { authorization: `Bearer ${t.apiKey}`, 'content-type': 'application/json', 'x-service-channel-id': s.channelId }, body });
      if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${await res.text()}`);
    });
  }
}, 300_000);
