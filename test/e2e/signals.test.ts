/**
 * Signals on the real `postrider serve` process: SIGTERM while sends are arriving loses no
 * acknowledged message; SIGHUP reloads the log level from the config file and the SMTP
 * certificate from its files, without a restart.
 */
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, freePort, startServe, type ServeProcess } from '../support/cli.js';
import { openStore } from '../support/store.js';
import { waitFor } from '../support/wait.js';

const TOKEN = /pr_[A-Za-z0-9_-]{20,}/;

let root: string;

beforeAll(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-signals-'));
});

afterAll(() => {
  fs.rmSync(root, { recursive: true, force: true });
});

async function firstKey(p: ServeProcess): Promise<string> {
  await waitFor(() => TOKEN.test(p.stderr()), { what: 'the initial key' });
  return TOKEN.exec(p.stderr())![0];
}

/** A sandbox channel with a linked domain: the whole send path runs, nothing leaves the machine. */
async function sandboxSender(url: string, key: string): Promise<{ channelId: string; domain: string }> {
  const ch = await call(`${url}/channels`, 'POST', key, { name: 'load', deliveryType: 'sandbox' });
  expect(ch.status).toBe(200);
  const domain = `load-${crypto.randomBytes(3).toString('hex')}.com`;
  const d = await call(`${url}/domains`, 'POST', key, { name: domain, channelIds: [ch.body.id], dkimAlgorithm: 'ed25519' });
  expect(d.status, JSON.stringify(d.body)).toBe(200);
  return { channelId: ch.body.id, domain };
}

describe('SIGTERM under load', () => {
  it('exits 0 and every message answered 200 is on disk with its body and events', async () => {
    const dataDir = path.join(root, 'term');
    const p = await startServe({ POSTRIDER_DATA_DIR: dataDir, POSTRIDER_WORKERS_THREADS: '2' });
    const key = await firstKey(p);
    const s = await sandboxSender(p.url, key);

    const accepted: string[] = [];
    let refused = 0;
    let other = 0;
    let running = true;
    const sender = async (n: number) => {
      for (let i = 0; running; i++) {
        try {
          const res = await fetch(`${p.url}/send/transactional`, {
            method: 'POST',
            headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-service-channel-id': s.channelId },
            body: JSON.stringify({ from: { email: `app@${s.domain}` }, to: [{ email: `r${n}-${i}@example.org` }], subject: `m ${n} ${i}`, text: 'load' }),
          });
          const body = (await res.json()) as { messageId?: string };
          if (res.status === 200) accepted.push(String(body.messageId));
          else if (res.status === 503) refused++;
          else other++;
        } catch {
          // Connection refused or reset once the listener is closed: the sender was not told 200.
          refused++;
          if (p.child.exitCode !== null) return;
          await new Promise((r) => setTimeout(r, 5));
        }
      }
    };
    const senders = Array.from({ length: 8 }, (_, n) => sender(n));
    await waitFor(() => accepted.length >= 50, { what: 'a first batch of accepted sends', timeout: 20_000 });
    const stopped = p.stop('SIGTERM');
    const { code } = await stopped;
    running = false;
    await Promise.all(senders);

    console.log(`SIGTERM under load: ${accepted.length} sends answered 200, ${refused} refused or cut off, ${other} other answers`);
    expect(code).toBe(0);
    expect(other).toBe(0);
    expect(accepted.length).toBeGreaterThanOrEqual(50);
    const store = await openStore(dataDir);
    try {
      const missing: string[] = [];
      for (const id of accepted) {
        const m = await store.messages.get(id);
        // Its body, or the committed request the finishing stage composes it from at the next start.
        const kept = (await store.messages.body(id)) || (await store.messages.isUnfinished(id));
        if (!m || !kept || !(await store.events.ofMessage(id)).some((e) => e.eventType === 'accepted')) missing.push(id);
      }
      expect(missing, `${missing.length} of ${accepted.length} acknowledged messages missing`).toEqual([]);
    } finally {
      await store.stop();
    }
  }, 60_000);
});

describe('a second SIGTERM during the shutdown', () => {
  it('is logged and changes nothing: the request in flight gets its 200, the process exits 0 and releases the folder', async () => {
    // The handlers were process.once: the second SIGTERM (Ctrl-C twice, npm passing the signal
    // on) took the default action and killed the daemon mid-shutdown, exit 143, daemon.lock left.
    const dataDir = path.join(root, 'term-twice');
    const p = await startServe({ POSTRIDER_DATA_DIR: dataDir, POSTRIDER_LOG_LEVEL: 'info' });
    const key = await firstKey(p);
    const s = await sandboxSender(p.url, key);
    const body = Buffer.from(JSON.stringify({ from: { email: `app@${s.domain}` }, to: [{ email: 'ann@example.org' }], subject: 'in flight', text: 'x'.repeat(4096) }));
    const req = http.request(`${p.url}/send/transactional`, {
      method: 'POST',
      // 100-continue: the daemon answers it once it has the request's head, so the request is in flight.
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-service-channel-id': s.channelId, 'content-length': body.length, expect: '100-continue' },
    });
    const answered = new Promise<{ status: number; text: string }>((resolve, reject) => {
      req.once('response', (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.once('end', () => resolve({ status: res.statusCode ?? 0, text }));
      });
      req.once('error', reject);
    });
    answered.catch(() => undefined); // a reset is reported where it is awaited, below
    await new Promise<void>((resolve) => req.once('continue', resolve));
    req.write(body.subarray(0, 100));

    p.child.kill('SIGTERM');
    await waitFor(() => p.stdout().includes('"msg":"shutting down"'), { what: 'the shutdown to start' });
    p.child.kill('SIGTERM');
    await waitFor(() => p.stdout().includes('already shutting down'), { what: 'the second SIGTERM to be logged', failFast: () => (p.child.exitCode !== null || p.child.signalCode !== null) && `the daemon died (${p.child.signalCode ?? p.child.exitCode})` });
    req.end(body.subarray(100));

    const res = await answered;
    expect(res.status, res.text).toBe(200);
    const { code } = await p.stop();
    expect(code).toBe(0);
    expect(fs.existsSync(path.join(dataDir, 'daemon.lock'))).toBe(false);
  }, 60_000);
});

describe('SIGHUP', () => {
  let p: ServeProcess;
  let configFile: string;
  let certFile: string;
  let keyFile: string;
  let smtpPort: number;

  function makeCert(cn: string): void {
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', keyFile, '-out', certFile, '-days', '2', '-subj', `/CN=${cn}`], { stdio: 'ignore' });
  }

  function writeConfig(level: string): void {
    fs.writeFileSync(configFile, JSON.stringify({ log: { level }, smtp: { enabled: true, port: smtpPort, tlsCert: certFile, tlsKey: keyFile } }));
  }

  /** The CN of the certificate the SMTP listener presents after STARTTLS. */
  async function presentedCn(): Promise<string> {
    const sock = net.connect(smtpPort, '127.0.0.1');
    let buf = '';
    const next = (re: RegExp) =>
      new Promise<void>((resolve, reject) => {
        const onData = (d: Buffer) => {
          buf += d.toString();
          if (re.test(buf)) {
            sock.off('data', onData);
            buf = '';
            resolve();
          }
        };
        sock.on('data', onData);
        sock.once('error', reject);
      });
    await next(/^220 .*\r\n/m);
    sock.write('EHLO test.example\r\n');
    await next(/^250 .*\r\n/m);
    sock.write('STARTTLS\r\n');
    await next(/^220 .*\r\n/m);
    const secure = tls.connect({ socket: sock, rejectUnauthorized: false, servername: 'localhost' });
    await new Promise<void>((resolve, reject) => secure.once('secureConnect', resolve).once('error', reject));
    const cn = String(secure.getPeerCertificate().subject.CN);
    secure.destroy();
    return cn;
  }

  beforeAll(async () => {
    const dir = path.join(root, 'hup');
    fs.mkdirSync(dir, { recursive: true });
    configFile = path.join(dir, 'postrider.json');
    certFile = path.join(dir, 'cert.pem');
    keyFile = path.join(dir, 'key.pem');
    smtpPort = await freePort();
    makeCert('before.example');
    writeConfig('warn');
    p = await startServe({ POSTRIDER_DATA_DIR: path.join(dir, 'data'), POSTRIDER_CONFIG: configFile, POSTRIDER_SMTP_ENABLED: undefined, POSTRIDER_LOG_LEVEL: undefined });
  });

  afterAll(async () => {
    if (p && p.child.exitCode === null) await p.stop();
  });

  it('reloads the log level from the config file and the SMTP certificate from its files', async () => {
    expect(await presentedCn()).toBe('before.example');
    // At warn, info lines (such as "reloaded") are not written.
    expect(p.stdout()).not.toContain('"msg":"reloaded"');
    makeCert('after.example');
    writeConfig('info');
    p.child.kill('SIGHUP');
    await waitFor(() => p.stdout().includes('"msg":"reloaded"'), { what: 'the reload to be logged at the new level' });
    expect(await presentedCn()).toBe('after.example');
    // Still serving: the daemon was not restarted.
    expect(p.child.exitCode).toBeNull();
    const health = await fetch(`${p.url}/health`);
    expect(health.status).toBe(200);
  });

  it('keeps running with the previous configuration when the file became invalid', async () => {
    fs.writeFileSync(configFile, '{ "log": { "level": "chatty" } }');
    p.child.kill('SIGHUP');
    await waitFor(() => p.stdout().includes('configuration invalid'), { what: 'the refusal to be logged' });
    expect(p.child.exitCode).toBeNull();
    expect(await presentedCn()).toBe('after.example');
  });

  it('names in a warning the changed keys a reload does not apply, instead of only "reloaded"', async () => {
    // delivery.rate and api.rateLimit edited, then `systemctl reload`: the log said "reloaded"
    // and the daemon kept the old values, with nothing to say so.
    fs.writeFileSync(configFile, JSON.stringify({ log: { level: 'debug' }, smtp: { enabled: true, port: smtpPort, tlsCert: certFile, tlsKey: keyFile }, delivery: { rate: 7 }, api: { rateLimit: 99 } }));
    p.child.kill('SIGHUP');
    const warning = await waitFor(() => p.stdout().split('\n').find((l) => l.includes('"level":40') && l.includes('"msg":"reload: ')), { what: 'the warning of the reload' });
    expect(JSON.parse(warning)).toMatchObject({
      level: 40,
      keys: ['api.rateLimit', 'delivery.rate'],
      msg: 'reload: api.rateLimit, delivery.rate changed; a reload applies only log.level and re-reads the SMTP certificate files: restart for the rest',
    });
    await waitFor(() => p.stdout().includes('"level":"debug","msg":"reloaded"'), { what: 'the new log level to be applied' });
  });
});
