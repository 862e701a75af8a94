/**
 * A client that closes the connection in the middle of a message (before the final dot), on the
 * submission listener and on the inbound one: nothing of the message is kept, and the daemon
 * logs it as the ordinary event it is (info), not as an internal fault (error, level 50, with
 * a stack: what an operator is paged for).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { Daemon } from '../../src/daemon.js';
import { createLogger } from '../../src/log/logger.js';
import { apiRequest } from '../support/daemon.js';
import { startDnsServer, type TestDns } from '../support/dns-server.js';
import { setupSender, type Sender } from '../support/sending.js';
import { SmtpWire } from '../support/smtp-wire.js';
import { testStoreOverrides } from '../support/store.js';
import { waitFor } from '../support/wait.js';

type LogLine = { level: number; msg: string; [k: string]: unknown };

let dns: TestDns;
let dataDir: string;
let daemon: Daemon;
let apiKey: string;
let s: Sender;
const logLines: LogLine[] = [];

beforeAll(async () => {
  dns = await startDnsServer();
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-test-'));
  const overrides = {
    dataDir,
    ...testStoreOverrides(dataDir),
    'http.port': 0,
    'dns.servers': [dns.address],
    'delivery.enabled': false,
    'smtp.enabled': true,
    'smtp.port': 0,
    'inbound.enabled': true,
    'inbound.port': 0,
  };
  const logger = createLogger({ level: 'debug', destination: { write: (line: string) => void logLines.push(JSON.parse(line) as LogLine) } });
  daemon = new Daemon(loadConfig({ env: {}, overrides }), logger);
  await daemon.start();
  apiKey = daemon.initialCredentials!.apiKey;
  s = await setupSender({ api: (method, urlPath, o = {}) => apiRequest(`http://127.0.0.1:${daemon.http.port}`, () => apiKey, method, urlPath, o) }, dns);
});

afterAll(async () => {
  await daemon?.stop();
  await dns?.close();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

/** DATA, part of a message, then the connection closed; resolves once the daemon logged the drop. */
async function dropMidMessage(c: SmtpWire, logged: RegExp): Promise<void> {
  expect((await c.cmd('DATA'))?.code).toBe(354);
  c.write('From: <someone@example.org>\r\nSubject: cut short\r\n\r\nthe first half of a');
  // Written out before the close: the listener reads the first half, then the end of the connection.
  await new Promise<void>((resolve) => c.socket.write('', () => resolve()));
  c.close();
  await waitFor(() => logLines.some((l) => logged.test(l.msg)), { what: `the log line ${logged}` });
}

const faults = () => logLines.filter((l) => l.level >= 50);

describe('a client that drops the connection mid-message', () => {
  it('on the submission listener: nothing is kept, no error is logged', async () => {
    const c = await SmtpWire.connect(daemon.smtp!.port);
    expect((await c.login(s.channelId, apiKey))?.code).toBe(235);
    expect((await c.cmd(`MAIL FROM:<app@${s.domain}>`))?.code).toBe(250);
    expect((await c.cmd('RCPT TO:<ann@example.net>'))?.code).toBe(250);
    await dropMidMessage(c, /^smtp client closed the connection during DATA/);
    expect(faults()).toEqual([]);
    const list = await apiRequest(`http://127.0.0.1:${daemon.http.port}`, () => apiKey, 'GET', '/activity/messages');
    expect(list.body.results).toEqual([]);
  });

  it('on the inbound listener: nothing is kept, no error is logged', async () => {
    const c = await SmtpWire.connect(daemon.inbound!.port);
    expect((await c.reply())?.code).toBe(220);
    expect((await c.cmd('EHLO peer.example.org'))?.code).toBe(250);
    expect((await c.cmd('MAIL FROM:<someone@example.org>'))?.code).toBe(250);
    expect((await c.cmd(`RCPT TO:<fbl@bounces.${s.domain}>`))?.code).toBe(250);
    await dropMidMessage(c, /^inbound client closed the connection during DATA/);
    expect(faults()).toEqual([]);
    expect(logLines.filter((l) => l.msg === 'inbound message')).toEqual([]);
  });
});
