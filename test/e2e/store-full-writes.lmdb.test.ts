/**
 * The LMDB engine's own test (raw writes to its environment): every write settles on a full disk.
 * The store runs in a child process under a file size limit (prlimit), and bursts of writes
 * trickle in while commits fail, so some are queued while a failing batch runs. Two ways a write
 * hung for good here:
 * - with lmdb-js's overlapping sync, a write could commit and still never resolve: its flush
 *   promise was the failing batch's, which lmdb-js never settles;
 * - sometimes lmdb-js rejects a failed batch's writes only when the next batch starts, and its
 *   `commitError` (the cause) then waits for a later failure; when the next commits succeed it
 *   never settles, and awaiting it held the write (commit-failure.ts).
 * Each burst ends quiet, with no write after it until all of its writes have settled: a cause
 * that waits for a later failure waits for good there. Each write must end as committed or as
 * storage_full within seconds.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { prlimitAvailable } from '../support/child-daemon.js';

const dist = path.resolve('dist/store/lmdb');

/** Runs in the child: rounds of 100 bursts of 5-44 writes to a fresh store, a third small, the rest 270 KB, paced unevenly. */
const CHILD = `
import { Store } from ${JSON.stringify(path.join(dist, 'env.js'))};
import { dbsOf } from ${JSON.stringify(path.join(dist, 'databases.js'))};
import fs from 'node:fs'; import os from 'node:os'; import path from 'node:path';
process.on('SIGXFSZ', () => {});
process.on('unhandledRejection', () => {});
const counts = { committed: 0, full: 0, other: 0, unsettled: 0, bursts: 0, slowestMs: 0 };
let seed = 7;
const random = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
const big = 'x'.repeat(270000);
let k = 0;
rounds: for (let round = 0; round < 4; round++) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-full-writes-'));
  const store = new Store({ dataDir: dir });
  await store.start();
  const db = dbsOf(store);
  for (let burst = 0; burst < 100; burst++) {
    counts.bursts++;
    const writes = [];
    const n = 5 + Math.floor(random() * 40);
    for (let i = 0; i < n; i++, k++) {
      const started = Date.now();
      const value = k % 3 === 0 ? 'small' : big;
      writes.push(store.write(() => db.bodies.put('m' + k, value))
        .then(() => counts.committed++, (e) => (e.code === 'storage_full' ? counts.full++ : counts.other++))
        .then(() => (counts.slowestMs = Math.max(counts.slowestMs, Date.now() - started))));
      await new Promise((r) => (random() < 0.5 ? setImmediate(r) : setTimeout(r, random() * 2)));
    }
    let settled = 0;
    writes.forEach((w) => w.then(() => settled++));
    let timer;
    await Promise.race([Promise.all(writes), new Promise((r) => (timer = setTimeout(r, 10000)))]);
    clearTimeout(timer);
    if (settled < n) {
      counts.unsettled += n - settled;
      break rounds;
    }
  }
  fs.rmSync(dir, { recursive: true, force: true });
}
process.stdout.write(JSON.stringify(counts));
process.exit(0);
`;

function runChild(): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('prlimit', ['--fsize=6291456:unlimited', process.execPath, '--input-type=module', '-e', CHILD], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('writes on a full disk', () => {
  it('each end as committed or storage_full, none left hanging', async () => {
    if (!(await prlimitAvailable())) throw new Error('prlimit (util-linux) is needed to simulate a full disk');
    const { code, stdout, stderr } = await runChild();
    expect(code, stderr.slice(-2000)).toBe(0);
    const counts = JSON.parse(stdout) as { committed: number; full: number; other: number; unsettled: number; bursts: number; slowestMs: number };
    expect(counts.unsettled, stdout).toBe(0);
    expect(counts.other, stdout).toBe(0);
    expect(counts.full, 'the limit was reached').toBeGreaterThan(0);
    expect(counts.committed, 'writes fit before the limit').toBeGreaterThan(10);
    expect(counts.bursts, stdout).toBe(400);
  }, 120_000);
});
