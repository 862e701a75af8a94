/**
 * The error a write of a failed LMDB commit gets (store/lmdb/commit-failure.ts), with lmdb-js's
 * "Commit failed" errors made here: its cause arrives on `commitError`, or never (lmdb-js lost
 * it), and then the last cause that arrived or the disk's state decides, after a bounded wait.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AppError } from '../../src/domain/errors.js';
import { CommitFailures, isLmdbCommitFailure } from '../../src/store/lmdb/commit-failure.js';
import { prlimitAvailable } from '../support/child-daemon.js';

/** lmdb-js's rejection of a write whose commit failed, with the cause `commitError` settles with (never, when lost). */
function commitFailed(cause: { code: number } | 'lost'): Error & { commitError: Promise<unknown> } {
  const commitError = cause === 'lost' ? new Promise<never>(() => undefined) : Promise.reject(Object.assign(new Error(`errno ${cause.code}`), cause));
  return Object.assign(new Error('Commit failed (see commitError for details)'), { commitError });
}

const ENOSPC = { code: 28 };
const EIO = { code: 5 };
const MDB_CORRUPTED = { code: -30796 };

let dir: string;
let dataFile: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-commit-failure-'));
  dataFile = path.join(dir, 'data.mdb');
  fs.writeFileSync(dataFile, Buffer.alloc(64 * 1024));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('a failed commit', () => {
  it('is storage_full when its cause says there was no room', async () => {
    const failures = new CommitFailures(dataFile, 20);
    for (const cause of [ENOSPC, EIO, { code: 122 }, { code: 27 }, { code: -30792 }]) {
      const err = await failures.errorFor(commitFailed(cause));
      expect(err).toBeInstanceOf(AppError);
      expect((err as AppError).code).toBe('storage_full');
      expect(((err as AppError).cause as { code: number }).code).toBe(cause.code);
    }
  });

  it('is its cause when that is not about room', async () => {
    const err = await new CommitFailures(dataFile, 20).errorFor(commitFailed(MDB_CORRUPTED));
    expect(err).not.toBeInstanceOf(AppError);
    expect((err as { code: number }).code).toBe(MDB_CORRUPTED.code);
  });

  it('whose cause never arrives ends after the wait, as the last cause that arrived said', async () => {
    const failures = new CommitFailures(dataFile, 20);
    await failures.errorFor(commitFailed(ENOSPC));
    const lost = commitFailed('lost');
    const err = await failures.errorFor(lost);
    expect((err as AppError).code).toBe('storage_full');
    expect((err as AppError).cause).toBe(lost);

    const other = new CommitFailures(dataFile, 20);
    await other.errorFor(commitFailed(MDB_CORRUPTED));
    const lostToo = commitFailed('lost');
    expect(await other.errorFor(lostToo)).toBe(lostToo);
  });

  it('whose cause never arrives, with none before, is not storage_full while the disk has room and the file no limit', async () => {
    const lost = commitFailed('lost');
    expect(await new CommitFailures(dataFile, 20).errorFor(lost)).toBe(lost);
  });

  it('whose cause never arrives, with none before, is storage_full when the data file is at the process file size limit', async () => {
    if (!(await prlimitAvailable())) throw new Error('prlimit (util-linux) is needed to set a file size limit');
    const module = path.resolve('dist/store/lmdb/commit-failure.js');
    const child = `
      import { CommitFailures } from ${JSON.stringify(module)};
      const lost = Object.assign(new Error('Commit failed'), { commitError: new Promise(() => {}) });
      const err = await new CommitFailures(${JSON.stringify(dataFile)}, 20).errorFor(lost);
      process.stdout.write(String(err.code ?? 'none'));
    `;
    fs.writeFileSync(dataFile, Buffer.alloc(1536 * 1024));
    const out = await new Promise<string>((resolve, reject) => {
      const p = spawn('prlimit', ['--fsize=2097152:unlimited', process.execPath, '--input-type=module', '-e', child], { stdio: ['ignore', 'pipe', 'inherit'] });
      let stdout = '';
      p.stdout.on('data', (d) => (stdout += d));
      p.on('error', reject);
      p.on('close', () => resolve(stdout));
    });
    expect(out).toBe('storage_full');
  });

  it('leaves any other error as it is', async () => {
    const plain = new Error('not a commit');
    expect(isLmdbCommitFailure(plain)).toBe(false);
    const failed = commitFailed(EIO);
    failed.commitError.catch(() => undefined);
    expect(isLmdbCommitFailure(failed)).toBe(true);
    const failures = new CommitFailures(dataFile, 20);
    expect(await failures.errorFor(plain)).toBe(plain);
    expect(failures.count).toBe(0);
    // Counted at once, before the cause is awaited.
    const counted = failures.errorFor(commitFailed(ENOSPC));
    expect(failures.count).toBe(1);
    await counted;
  });
});
