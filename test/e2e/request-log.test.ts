/**
 * The request log as docs/operations.md describes it: exactly one line per HTTP request, with the
 * request id the client got in X-Request-Id, the path without its query, the status, and never
 * the API key.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startServe } from '../support/cli.js';
import { waitFor } from '../support/wait.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-request-log-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

describe('the request log', () => {
  it('writes one line per request with its id, path, status and no key', async () => {
    const p = await startServe({ POSTRIDER_DATA_DIR: root, POSTRIDER_LOG_LEVEL: 'info' });
    try {
      const res = await fetch(`${p.url}/channels?recipient=ann@example.net`, { headers: { authorization: 'Bearer pr_not_a_real_key_but_long_enough' } });
      expect(res.status).toBe(401);
      const id = res.headers.get('x-request-id')!;
      await waitFor(() => p.stdout().includes(id), { what: 'the request line in the log' });
      const lines = p.stdout().split('\n').filter((l) => l.includes(id)).map((l) => JSON.parse(l));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatchObject({ msg: 'request', reqId: id, method: 'GET', path: '/channels', status: 401 });
      expect(typeof lines[0].ms).toBe('number');
      expect(p.stdout()).not.toContain('pr_not_a_real_key');
      expect(p.stdout()).not.toContain('ann@example.net');
      expect(p.stdout()).not.toContain('incoming request');
    } finally {
      await p.stop();
    }
  });
});
