import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startServe, type ServeProcess } from '../support/cli.js';
import { openStore } from '../support/store.js';
import { waitFor } from '../support/wait.js';

const TOKEN = /pr_[A-Za-z0-9_-]{20,}/g;

let root: string;
let dataDir: string;

beforeAll(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-serve-'));
  // A folder that does not exist yet: serve creates it.
  dataDir = path.join(root, 'data');
});

afterAll(() => {
  fs.rmSync(root, { recursive: true, force: true });
});

describe('postrider serve on an empty data folder', () => {
  let first: ServeProcess;
  let key: string;
  let firstStop: { code: number | null; ms: number };
  let channelId: string;

  beforeAll(async () => {
    first = await startServe({ POSTRIDER_DATA_DIR: dataDir });
    // The key is printed right after the API starts listening.
    await waitFor(() => first.stderr().includes('First start'), { what: 'the first-start notice' });
    key = (first.stderr().match(TOKEN) ?? [''])[0];
  });

  afterAll(async () => {
    if (first && first.child.exitCode === null) await first.stop();
  });

  it('prints the initial API key once on stderr and writes it to initial-api-key with mode 0600', () => {
    const printed = first.stderr().match(TOKEN) ?? [];
    expect(printed).toEqual([key]);
    expect(first.stderr()).toContain('First start: created account');
    // Where to go next: the dashboard, under the address the daemon answers at.
    expect(first.stderr()).toContain(`Sign in to the dashboard with it: ${first.url}/dashboard\n`);
    expect(first.stdout()).not.toContain(key);
    const file = path.join(dataDir, 'initial-api-key');
    expect(fs.readFileSync(file, 'utf8')).toBe(`${key}\n`);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
  });

  it('creates, lists, updates and deletes a channel with that key', async () => {
    const base = `${first.url}/channels`;
    const created = await call(base, 'POST', key, { name: 'Receipts', deliveryType: 'sandbox' });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ name: 'Receipts', deliveryType: 'sandbox', tracking: { links: false, opens: false } });
    const list = await call(base, 'GET', key);
    expect(list.body).toEqual({
      results: [{ id: created.body.id, name: 'Receipts', deliveryType: 'sandbox', createdAt: created.body.createdAt }],
      totalCount: 1,
    });
    const updated = await call(`${base}/${created.body.id}`, 'PATCH', key, { name: 'Invoices', tracking: { opens: true } });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ name: 'Invoices', tracking: { links: false, opens: true } });
    expect((await call(`${base}/${created.body.id}`, 'DELETE', key)).status).toBe(204);
    expect((await call(`${base}/${created.body.id}`, 'GET', key)).status).toBe(404);
    const kept = await call(base, 'POST', key, { name: 'Kept across restarts' });
    channelId = kept.body.id;
  });

  it('exits 0 within a few seconds of SIGTERM', async () => {
    firstStop = await first.stop('SIGTERM');
    expect(firstStop.code).toBe(0);
    expect(firstStop.ms).toBeLessThan(8000);
  });

  it('does not create another account or print a key on the next start, and keeps the data', async () => {
    const before = fs.readFileSync(path.join(dataDir, 'initial-api-key'), 'utf8');
    const second = await startServe({ POSTRIDER_DATA_DIR: dataDir });
    try {
      const res = await call(`${second.url}/channels`, 'GET', key);
      expect(res.status).toBe(200);
      expect(res.body.results.map((c: { id: string }) => c.id)).toEqual([channelId]);
    } finally {
      const stopped = await second.stop('SIGINT');
      expect(stopped.code).toBe(0);
    }
    expect(second.stderr()).not.toMatch(TOKEN);
    expect(second.stderr()).not.toContain('First start');
    expect(fs.readFileSync(path.join(dataDir, 'initial-api-key'), 'utf8')).toBe(before);

    const store = await openStore(dataDir);
    try {
      expect(await store.accounts.list()).toHaveLength(1);
    } finally {
      await store.stop();
    }
  });
});
