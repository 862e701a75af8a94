/**
 * API keys stay secret: a daemon run at log level trace (the child process's whole stdout, which
 * is its pino log, and stderr) never contains a key, whatever clients do with it (the right
 * header, a wrong one, a revoked key, SMTP AUTH PLAIN and LOGIN, user name and password swapped);
 * the store holds hashes only; and every comparison of a presented secret is constant-time.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChildDaemon } from '../support/child-daemon.js';
import { runCli } from '../support/cli.js';
import { startDnsServer, type TestDns } from '../support/dns-server.js';
import { setupSender, type Sender } from '../support/sending.js';
import { SmtpWire } from '../support/smtp-wire.js';
import { TEST_STORE_ENGINE } from '../support/store.js';
import { waitFor } from '../support/wait.js';

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));

let dns: TestDns;
let d: ChildDaemon;
let s: Sender;
const keys: string[] = [];

beforeAll(async () => {
  dns = await startDnsServer();
  d = new ChildDaemon({
    env: { POSTRIDER_LOG_LEVEL: 'trace', POSTRIDER_SMTP_ENABLED: 'true', POSTRIDER_DNS_SERVERS: dns.address, POSTRIDER_SMTP_AUTH_FAILURE_LIMIT: '1000' },
  });
  await d.start();
  keys.push(d.apiKey);
  s = await setupSender(d, dns);
}, 60_000);

afterAll(async () => {
  await d?.close();
  await dns?.close();
});

/** The forms a key could take in a log line: as is, and inside SMTP AUTH base64. */
function forms(key: string): string[] {
  return [key, key.slice(3), Buffer.from(key).toString('base64'), Buffer.from(`\0api\0${key}`).toString('base64'), Buffer.from(`\0${s.channelId}\0${key}`).toString('base64')];
}

describe('API keys in logs', () => {
  it('are never written to the log, whatever clients do with them', async () => {
    const accounts = await runCli(['accounts', 'list', '--json'], { POSTRIDER_DATA_DIR: d.dataDir });
    const accountId = JSON.parse(accounts.stdout)[0].id;
    const created = await runCli(['keys', 'create', '--account', accountId, '--channel', s.channelId, '--json'], { POSTRIDER_DATA_DIR: d.dataDir });
    expect(created.code, created.stderr).toBe(0);
    const channelKey = /pr_[A-Za-z0-9_-]{20,}/.exec(created.stdout)![0];
    keys.push(channelKey);
    const revoked = await runCli(['keys', 'create', '--account', accountId, '--json'], { POSTRIDER_DATA_DIR: d.dataDir });
    const revokedKey = /pr_[A-Za-z0-9_-]{20,}/.exec(revoked.stdout)![0];
    keys.push(revokedKey);
    expect((await runCli(['keys', 'revoke', JSON.parse(revoked.stdout).id], { POSTRIDER_DATA_DIR: d.dataDir })).code).toBe(0);
    const unknown = 'pr_' + 'Z'.repeat(32);
    keys.push(unknown);

    // HTTP: right and wrong places, good and bad keys, successful and failing requests.
    for (const key of keys) {
      await d.api('GET', '/channels', { key });
      await d.api('GET', '/channels', { key: null, headers: { authorization: `Basic ${Buffer.from(`api:${key}`).toString('base64')}` } });
      await d.api('GET', '/channels', { key: null, headers: { authorization: `Token ${key}` } });
      await d.api('GET', '/channels/not-a-uuid', { key });
      await d.api('POST', '/channels', { key, rawBody: '{"name": ' });
      await d.api('POST', '/send/transactional', { key, headers: { 'x-service-channel-id': key }, body: { from: { email: 'x' } } });
    }
    // SMTP: AUTH PLAIN and LOGIN, right and swapped, good and bad (sessions in parallel: each
    // greeting takes 100 ms).
    const sessions = keys.flatMap((key) =>
      [
        [s.channelId, key],
        ['api', key],
        [key, s.channelId],
        [key, key],
      ].map(async ([user, pass]) => {
        const c = await SmtpWire.connect(d.smtpPort);
        await c.login(user, pass);
        await c.quit();
        const l = await SmtpWire.connect(d.smtpPort);
        await l.reply();
        await l.cmd('EHLO client.example');
        await l.cmd('AUTH LOGIN');
        await l.cmd(Buffer.from(user).toString('base64'));
        await l.cmd(Buffer.from(pass).toString('base64'));
        await l.quit();
      }),
    );
    await Promise.all(sessions);
    // Sentinel: a request after all of the above; the log is one ordered stream, so once its
    // line is out, so is every line about the requests and sessions before it.
    const sentinel = `/sentinel-${randomUUID()}`;
    expect((await d.api('GET', sentinel)).status).toBe(404);
    await waitFor(() => d.stdout.includes(`"path":"${sentinel}"`), { what: "the sentinel request's log line" });
    const log = d.stdout;
    expect(log.length).toBeGreaterThan(1000); // trace level really logged something
    const found = keys.flatMap((k) => forms(k).filter((f) => log.includes(f)).map((f) => `${k.slice(0, 8)}… as ${f.slice(0, 12)}…`));
    const lines = log.split('\n').filter((l) => keys.some((k) => l.includes(k.slice(3))));
    expect(found, lines.slice(0, 3).join('\n').slice(0, 1500)).toEqual([]);
  });

  it('prints the initial key once on stderr (the first-start banner), nowhere else', () => {
    const first = keys[0];
    expect(d.stderr.split(first).length - 1).toBe(1);
    expect(d.stderr).toContain('First start');
    for (const k of keys.slice(1)) expect(d.stderr).not.toContain(k);
  });

  // Reads LMDB's data files in db/: on PostgreSQL the data folder holds no store.
  it.skipIf(TEST_STORE_ENGINE !== 'lmdb')('stores hashes only: no key appears anywhere in the data files', async () => {
    await d.stop();
    const files = fs.readdirSync(path.join(d.dataDir, 'db')).map((f) => fs.readFileSync(path.join(d.dataDir, 'db', f)));
    for (const key of keys) for (const f of files) expect(f.includes(Buffer.from(key))).toBe(false);
  });
});

describe('constant-time comparison of secrets', () => {
  const sources = (dir: string): string[] =>
    fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sources(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : []));

  it('looks API keys up by their SHA-256 hash and checks the record with timingSafeEqual', () => {
    const code = fs.readFileSync(path.join(SRC, 'store/lmdb/api-keys.ts'), 'utf8');
    const find = code.slice(code.indexOf('export function findApiKeyByToken'));
    const body = find.slice(0, find.indexOf('\n}\n'));
    expect(body).toMatch(/hashToken\(token\)/);
    expect(body).toMatch(/apiKeyHashes\.get\(hash\)/);
    expect(body).toMatch(/timingSafeEqual\(/);
    // The only place a presented key is checked is the store port's apiKeys.findByToken, which the
    // LMDB engine answers through findApiKeyByToken (behind its lookup cache, api-key-cache.ts).
    for (const f of ['api-keys/service.ts']) expect(fs.readFileSync(path.join(SRC, f), 'utf8')).toMatch(/apiKeys\.findByToken\(/);
    // SMTP AUTH goes through the API-key service (principalOfToken), and nothing else calls the store.
    expect(fs.readFileSync(path.join(SRC, 'submission/submitter.ts'), 'utf8')).toMatch(/principalOfToken\(/);
    const callers = sources(SRC).filter((f) => /findApiKeyByToken\(/.test(fs.readFileSync(f, 'utf8'))).map((f) => path.relative(SRC, f));
    expect(callers.sort()).toEqual(['store/lmdb/api-key-cache.ts', 'store/lmdb/api-keys.ts']);
    const portCallers = sources(SRC).filter((f) => /apiKeys\.findByToken\(/.test(fs.readFileSync(f, 'utf8'))).map((f) => path.relative(SRC, f));
    expect(portCallers).toEqual(['api-keys/service.ts']);
  });

  it('never compares a secret with === or !== anywhere in src', () => {
    const secret = /\b\w*(token|secret|password|passwd|apiKey|signingKey|signature|hmac|digest)\w*\b/i;
    const offenders: string[] = [];
    for (const file of sources(SRC)) {
      fs.readFileSync(file, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          const code = line.replace(/\/\/.*$/, '');
          for (const m of code.matchAll(/([\w.$[\]()'"]+)\s*[!=]==?\s*([\w.$[\]()'"]+)/g)) {
            const [, left, right] = m;
            const operands = [left, right];
            // Type, length and presence checks and comparisons with literals reveal nothing.
            if (operands.some((o) => /^(typeof|undefined|null|true|false|['"`]|\d)/.test(o) || /\.length$|\.(size|code|status|type|kind|name|id)$/.test(o))) continue;
            if (/typeof\s+\S+\s*$/.test(code.slice(0, m.index))) continue;
            if (operands.some((o) => secret.test(o))) offenders.push(`${path.relative(SRC, file)}:${i + 1}: ${line.trim()}`);
          }
        });
    }
    expect(offenders).toEqual([]);
  });
});
