/**
 * The SMTP listener in a user's first hour (issue 30 item 8): AUTH with a valid key and the wrong
 * kind of user name says which user name fits, and the generated certificate follows `hostname`.
 */
import { X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { Daemon } from '../../src/daemon.js';
import { createLogger } from '../../src/log/logger.js';
import { startDaemonWithDns, stopDaemonWithDns, type TestDaemon } from '../support/daemon.js';
import type { TestDns } from '../support/dns-server.js';
import { setupSender, type Sender } from '../support/sending.js';
import { SmtpWire } from '../support/smtp-wire.js';
import { testStoreOverrides } from '../support/store.js';

let dns: TestDns;
let t: TestDaemon;
let s: Sender;

beforeAll(async () => {
  ({ t, dns } = await startDaemonWithDns({ 'smtp.enabled': true, 'smtp.port': 0, 'smtp.authFailureLimit': 100 }));
  s = await setupSender(t, dns);
});

afterAll(() => stopDaemonWithDns({ t, dns }));

/** The reply to AUTH PLAIN with these credentials, over STARTTLS. */
async function authReply(user: string, pass: string): Promise<string> {
  const client = nodemailer.createTransport({ host: '127.0.0.1', port: t.daemon.smtp!.port, secure: false, requireTLS: true, tls: { rejectUnauthorized: false }, auth: { user, pass } });
  try {
    await client.verify();
    return '250';
  } catch (err) {
    return (err as { response: string }).response;
  } finally {
    client.close();
  }
}

describe('SMTP AUTH with a valid key and a user name that does not fit it', () => {
  it('says to use the channel id with an account-level key', async () => {
    expect(await authReply('api', t.apiKey)).toBe(
      '535 5.7.8 Authentication credentials invalid: this is an account-level API key, so the user name must be the id of the channel to send through (the user name "api" is for channel keys)',
    );
    expect(await authReply(s.channelId, t.apiKey)).toBe('250');
  });

  it('says a channel key belongs to another channel, without naming it', async () => {
    const other = await t.api('POST', '/channels', { body: { name: 'other' } });
    const { token } = await t.daemon.store.apiKeys.create({ accountId: t.accountId, channelId: s.channelId });
    const reply = await authReply(other.body.id, token);
    expect(reply).toMatch(/^535 5\.7\.8 Authentication credentials invalid: this API key belongs to another channel; use "api"/);
    expect(reply).not.toContain(s.channelId);
    expect(await authReply('api', token)).toBe('250');
  });

  it('says the user name is no channel of the account, for an account key only', async () => {
    expect(await authReply('00000000-0000-4000-8000-000000000000', t.apiKey)).toBe(
      "535 5.7.8 Authentication credentials invalid: the user name is not the id of a channel of this API key's account",
    );
  });

  it('says nothing more when the key is not valid, whatever the user name', async () => {
    for (const user of ['api', s.channelId, 'someone']) expect(await authReply(user, 'pr_not_a_key')).toBe('535 5.7.8 Authentication credentials invalid');
  });
});

/** The certificate the submission listener presents after STARTTLS. */
async function presentedCertificate(port: number): Promise<X509Certificate> {
  const wire = await SmtpWire.connect(port);
  await wire.reply();
  wire.socket.write('EHLO client.test\r\n');
  await wire.reply();
  wire.socket.write('STARTTLS\r\n');
  expect((await wire.reply())!.code).toBe(220);
  const secure = tls.connect({ socket: wire.socket, rejectUnauthorized: false });
  await new Promise<void>((resolve, reject) => secure.once('secureConnect', resolve).once('error', reject));
  const cert = secure.getPeerX509Certificate()!;
  secure.destroy();
  return cert;
}

describe('the generated submission certificate', () => {
  it('is made again when hostname changes between two starts, and kept while it does not', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-tls-'));
    const start = async (hostname: string) => {
      const config = loadConfig({ env: {}, overrides: { dataDir, ...testStoreOverrides(dataDir), hostname, 'http.port': 0, 'log.level': 'silent', 'smtp.enabled': true, 'smtp.port': 0, 'delivery.enabled': false } });
      const daemon = new Daemon(config, createLogger({ level: 'silent' }));
      await daemon.start();
      try {
        return await presentedCertificate(daemon.smtp!.port);
      } finally {
        await daemon.stop();
      }
    };
    try {
      const first = await start('vm');
      expect(first.checkHost('vm')).toBe('vm');
      const again = await start('vm');
      expect(again.fingerprint256).toBe(first.fingerprint256);
      const renamed = await start('mta.postrider-test.net');
      expect(renamed.checkHost('mta.postrider-test.net')).toBe('mta.postrider-test.net');
      expect(renamed.subject).toContain('CN=mta.postrider-test.net');
      expect(renamed.fingerprint256).not.toBe(first.fingerprint256);
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('never replaces an operator\'s certificate, whatever hostname says', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-tls-op-'));
    const { loadTls } = await import('../../src/smtp/tls.js');
    try {
      const generated = await loadTls({ dataDir: dir, certFile: '', keyFile: '', hostname: 'old.postrider-test.net' });
      const certFile = path.join(dir, 'operator.crt');
      const keyFile = path.join(dir, 'operator.key');
      fs.writeFileSync(certFile, generated.cert);
      fs.writeFileSync(keyFile, generated.key);
      const operator = await loadTls({ dataDir: dir, certFile, keyFile, hostname: 'new.postrider-test.net' });
      expect(operator.cert).toBe(generated.cert);
      expect(fs.readFileSync(certFile, 'utf8')).toBe(generated.cert);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
