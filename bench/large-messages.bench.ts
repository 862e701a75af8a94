/**
 * The daemon's main thread while one large message goes in (issue 36, "never frozen by one
 * input"): an 18 MB attachment over SMTP submission (STARTTLS + AUTH) and over HTTP
 * (POST /send/transactional, 24 MB of JSON), each measured with perf_hooks' event-loop delay
 * histogram from the request until 3 s after its answer (the finishing stage signs it meanwhile).
 * The daemon runs in this process (test/support/daemon.ts, real LMDB in a temp folder, real
 * worker pool, test DNS); the client is a child process sending a file written beforehand, so
 * none of its work (dot-stuffing, encoding) is in the histogram.
 * A measurement, not a test: it prints and asserts nothing about time.
 *
 *   npx vitest run --config bench/vitest.large-messages.config.ts     (ROUNDS=2 by default)
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { promisify } from 'node:util';
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

afterAll(async () => {
  await stopDaemonWithDns({ t, dns });
  fs.rmSync(dir, { recursive: true, force: true });
});

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

const run = promisify(execFile);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-large-'));

/** Runs `code` (an ES module) in a child node process from this checkout, with `env`. */
async function client(code: string, env: Record<string, string>): Promise<void> {
  await run(process.execPath, ['--input-type=module', '-e', code], { cwd: process.cwd(), env: { ...process.env, ...env }, maxBuffer: 1 << 20 });
}

const SMTP_CLIENT = `
import fs from 'node:fs';
import nodemailer from 'nodemailer';
const e = process.env;
const transport = nodemailer.createTransport({ host: '127.0.0.1', port: Number(e.PORT), secure: false, requireTLS: true, tls: { rejectUnauthorized: false }, auth: { user: e.USER, pass: e.PASS } });
await transport.sendMail({ envelope: { from: e.FROM, to: ['alice@example.net'] }, raw: fs.readFileSync(e.FILE) });
transport.close();
`;

const HTTP_CLIENT = `
import fs from 'node:fs';
const e = process.env;
const res = await fetch(e.URL + '/send/transactional', { method: 'POST', headers: { authorization: 'Bearer ' + e.PASS, 'content-type': 'application/json', 'x-service-channel-id': e.USER }, body: fs.readFileSync(e.FILE) });
if (res.status !== 200) throw new Error('HTTP ' + res.status + ': ' + (await res.text()));
`;

it('SMTP submission of an 18 MB attachment', async () => {
  const { default: MailComposer } = await import('nodemailer/lib/mail-composer/index.js');
  const raw = await new MailComposer({ from: `app@${s.domain}`, to: 'alice@example.net', subject: 'Large', text: 'Attached.', attachments: [{ filename: 'large.bin', content: content(ATTACHMENT_BYTES) }] }).compile().build();
  const file = path.join(dir, 'message.eml');
  fs.writeFileSync(file, raw);
  const env = { PORT: String(t.daemon.smtp!.port), USER: s.channelId, PASS: t.apiKey, FROM: `app@${s.domain}`, FILE: file };
  for (let r = 0; r < ROUNDS; r++) await measured(`smtp, ${raw.length} bytes`, () => client(SMTP_CLIENT, env));
}, 300_000);

it('HTTP send of an 18 MB attachment', async () => {
  const body = JSON.stringify({ from: { email: `app@${s.domain}` }, to: [{ email: 'alice@example.net' }], subject: 'Large', text: 'Attached.', attachments: [{ content: content(ATTACHMENT_BYTES).toString('base64'), fileName: 'large.bin' }] });
  const file = path.join(dir, 'send.json');
  fs.writeFileSync(file, body);
  const env = { URL: t.url, USER: s.channelId, PASS: t.apiKey, FILE: file };
  for (let r = 0; r < ROUNDS; r++) await measured(`http, ${body.length} bytes of JSON`, () => client(HTTP_CLIENT, env));
}, 300_000);
