/**
 * The LMDB engine's own test (raw writes to its environment): every write settles on a full disk. The store runs in a child process under a file size limit
 * (prlimit), and writes trickle in while commits fail, so some are queued while a failing batch
 * runs. With lmdb-js's overlapping sync such a write could commit and still never resolve: its
 * flush promise was the failing batch's, which lmdb-js never settles (a send that hung for good
 * on a full disk). Each write must end as committed or as storage_full, within seconds.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { prlimitAvailable } from '../support/child-daemon.js';

const dist = path.resolve('dist/store/lmdb');

/** Runs in the child: rounds of 1,500 writes to a fresh store, a third small, the rest 270 KB, paced unevenly. */
const CHILD = `
import { Store } from ${JSON.stringify(path.join(dist, 'env.js'))};
import { dbsOf } from ${JSON.stringify(path.join(dist, 'databases.js'))};
import fs from 'node:fs'; import os from 'node:os'; import path from 'node:path';
process.on('SIGXFSZ', () => {});
process.on('unhandledRejection', () => {});
const counts = { committed: 0, full: 0, other: 0, unsettled: 0 };
let seed = 7;
const random = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
const big = 'x'.repeat(270000);
// The race needs a write to arrive while a failing batch runs: a few rounds make it likely.
for (let round = 0; round < 4; round++) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-full-writes-'));
  const store = new Store({ dataDir: dir });
  await store.start();
  const db = dbsOf(store);
  const all = [];
  for (let i = 0; i < 1500; i++) {
    all.push(new Promise((settle) => {
      const timer = setTimeout(() => { counts.unsettled++; settle(); }, 5000);
      store.write(() => db.bodies.put('m' + i, i % 3 === 0 ? 'small' : big))
        .then(() => counts.committed++, (e) => (e.code === 'storage_full' ? counts.full++ : counts.other++))
        .finally(() => { clearTimeout(timer); settle(); });
    }));
    await new Promise((r) => (random() < 0.5 ? setImmediate(r) : setTimeout(r, random() * 2)));
    if (i % 31 === 0) await new Promise((r) => setTimeout(r, 1));
  }
  await Promise.all(all);
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
    const counts = JSON.parse(stdout) as { committed: number; full: number; other: number; unsettled: number };
    expect(counts.unsettled, stdout).toBe(0);
    expect(counts.other, stdout).toBe(0);
    expect(counts.full, 'the limit was reached').toBeGreaterThan(0);
    expect(counts.committed, 'writes fit before the limit').toBeGreaterThan(10);
  }, 60_000);
});
