/**
 * A first start that fails after the account was created (its SMTP port is taken) ends with one
 * line naming the listener, the address and the setting (exit 78, no stack trace), and the key
 * it created is not lost: the next start that succeeds prints it, and only that one.
 */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, runCli, startServe } from '../support/cli.js';
import { waitFor } from '../support/wait.js';

const TOKEN = /pr_[A-Za-z0-9_-]{20,}/g;
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-first-start-'));
const blockers: net.Server[] = [];

afterAll(async () => {
  for (const b of blockers) await new Promise((r) => b.close(r));
  fs.rmSync(root, { recursive: true, force: true });
});

async function occupy(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  blockers.push(server);
  return (server.address() as net.AddressInfo).port;
}

describe('a first start whose port is taken', () => {
  it('says which port and setting in one line, and prints the key at the next successful start', async () => {
    const dataDir = path.join(root, 'data');
    const taken = await occupy();
    const failed = await runCli(['serve'], {
      POSTRIDER_DATA_DIR: dataDir,
      POSTRIDER_HTTP_PORT: String(await freePort()),
      POSTRIDER_SMTP_PORT: String(taken),
      POSTRIDER_DELIVERY_ENABLED: 'false',
      POSTRIDER_LOG_LEVEL: 'silent',
      POSTRIDER_WORKERS_THREADS: '1',
    });
    expect(failed.code, failed.stderr).toBe(78);
    expect(failed.stderr.trim()).toBe(
      `postrider: SMTP submission cannot listen on 127.0.0.1:${taken}: the address is already in use (another postrider, or another program, listens there); change smtp.host / smtp.port (POSTRIDER_SMTP_PORT)`,
    );
    expect(failed.stderr).not.toMatch(TOKEN);
    const saved = fs.readFileSync(path.join(dataDir, 'initial-api-key'), 'utf8').trim();

    const second = await startServe({ POSTRIDER_DATA_DIR: dataDir, POSTRIDER_SMTP_PORT: String(await freePort()), POSTRIDER_SMTP_ENABLED: 'true' });
    await waitFor(() => second.stderr().includes('First start'), { what: 'the first-start notice' });
    expect(second.stderr().match(TOKEN)).toEqual([saved]);
    const res = await fetch(`${second.url}/channels`, { headers: { authorization: `Bearer ${saved}` } });
    expect(res.status).toBe(200);
    expect((await second.stop()).code).toBe(0);

    const third = await startServe({ POSTRIDER_DATA_DIR: dataDir });
    expect((await third.stop()).code).toBe(0);
    expect(third.stderr()).not.toMatch(TOKEN);
  });

  it('names the HTTP port and its setting when that one is taken', async () => {
    const taken = await occupy();
    const failed = await runCli(['serve'], {
      POSTRIDER_DATA_DIR: path.join(root, 'http'),
      POSTRIDER_HTTP_PORT: String(taken),
      POSTRIDER_SMTP_ENABLED: 'false',
      POSTRIDER_DELIVERY_ENABLED: 'false',
      POSTRIDER_LOG_LEVEL: 'silent',
    });
    expect(failed.code, failed.stderr).toBe(78);
    expect(failed.stderr.trim()).toBe(
      `postrider: HTTP API cannot listen on 127.0.0.1:${taken}: the address is already in use (another postrider, or another program, listens there); change http.host / http.port (POSTRIDER_HTTP_HOST / POSTRIDER_HTTP_PORT)`,
    );
  });
});

describe('the hostname', () => {
  it('is warned about at start when it is not fully qualified, and not when it is', async () => {
    const short = await startServe({ POSTRIDER_DATA_DIR: path.join(root, 'short'), POSTRIDER_HOSTNAME: 'vm' });
    expect((await short.stop()).code).toBe(0);
    expect(short.stdout()).toContain('hostname is not a fully qualified domain name');
    const full = await startServe({ POSTRIDER_DATA_DIR: path.join(root, 'full'), POSTRIDER_HOSTNAME: 'mta.mailhost.net', POSTRIDER_LOG_LEVEL: 'info' });
    expect((await full.stop()).code).toBe(0);
    expect(full.stdout()).toContain('postrider started');
    expect(full.stdout()).not.toContain('fully qualified');
  });
});
