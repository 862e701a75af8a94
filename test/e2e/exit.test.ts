/**
 * Every exit of `postrider serve` completes, and completes in order (store closed, then exit):
 * under write load, SIGTERM ends it with 0 within shutdown.graceMs plus the margin, and a fatal
 * error (an uncaught exception while an LMDB write is in flight) ends it with 70 after one log
 * line, where it used to hang in libuv's thread-pool cleanup with its ports bound and SIGTERM
 * ignored. Afterwards the ports are free, the data folder's lock is released, and every message
 * answered 200 is on disk. On PostgreSQL (npm run test:pg) only the SIGTERM case runs, without
 * `store check`: the fatal error is injected into lmdb-js's writes.
 */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChildDaemon } from '../support/child-daemon.js';
import { runCli } from '../support/cli.js';
import { CRASH_MESSAGE, crashOnNextWriteOptions } from '../support/fault-injection.js';
import { openStore, TEST_STORE_ENGINE } from '../support/store.js';
import { startWriteLoad } from '../support/write-load.js';

type Exit = { code: number | null; signal: NodeJS.Signals | null };

let tmp: string;

beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-exit-'));
});

afterAll(() => {
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** The process's exit, or 'still running' after ms (the daemon is left to close() to kill). */
function exitWithin(d: ChildDaemon, ms: number): Promise<Exit | 'still running'> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'still running'>((resolve) => (timer = setTimeout(() => resolve('still running'), ms)));
  return Promise.race([d.exited, late]).finally(() => clearTimeout(timer));
}

async function portFree(port: number): Promise<boolean> {
  const server = net.createServer();
  return new Promise((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** Messages answered 200 that are not in the store. */
async function missingOnDisk(dataDir: string, ids: string[]): Promise<string[]> {
  const store = await openStore(dataDir);
  try {
    const missing: string[] = [];
    for (const id of ids) if (!(await store.messages.get(id))) missing.push(id);
    return missing;
  } finally {
    await store.stop();
  }
}

// The crash is armed inside lmdb-js's write (support/fault-injection.ts): there is none on PostgreSQL.
describe.skipIf(TEST_STORE_ENGINE !== 'lmdb')('a fatal error while LMDB writes are in flight', () => {
  let d: ChildDaemon;

  afterAll(async () => {
    await d?.close();
  });

  it('is logged in one line, and the daemon closes the store and exits 70 within the bound, freeing its ports', async () => {
    d = new ChildDaemon({ env: { NODE_OPTIONS: crashOnNextWriteOptions(tmp) } });
    await d.start();
    const load = await startWriteLoad(d);
    await load.acceptedMore(30);
    d.child!.kill('SIGUSR2'); // arms the crash: it happens as lmdb-js starts its next write
    const exit = await exitWithin(d, 15_000);
    await load.stop();

    expect(exit, `stderr: ${d.stderr.slice(-2000)}`).toEqual({ code: 70, signal: null });
    const lines = d.stdout.split('\n').filter((l) => l.includes(CRASH_MESSAGE));
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0])).toMatchObject({ level: 60, msg: 'fatal error: closing the store, then exiting' });
    expect(await portFree(d.httpPort)).toBe(true);
    expect(await portFree(d.smtpPort)).toBe(true);
    expect(fs.existsSync(path.join(d.dataDir, 'daemon.lock'))).toBe(false);
    expect(await missingOnDisk(d.dataDir, load.accepted)).toEqual([]);
  }, 60_000);
});

describe('SIGTERM under write load', () => {
  let d: ChildDaemon;

  afterAll(async () => {
    await d?.close();
  });

  it('exits 0 within shutdown.graceMs plus the margin, frees its ports and leaves a store that passes store check', async () => {
    d = new ChildDaemon();
    await d.start();
    const load = await startWriteLoad(d);
    await load.acceptedMore(50);
    const started = Date.now();
    d.child!.kill('SIGTERM');
    // POSTRIDER_SHUTDOWN_GRACE_MS is 2 s for child daemons; the watchdog allows 10 s more.
    const exit = await exitWithin(d, 12_000);
    const ms = Date.now() - started;
    await load.stop();

    expect(exit, `stderr: ${d.stderr.slice(-2000)}`).toEqual({ code: 0, signal: null });
    expect(ms).toBeLessThan(12_000);
    expect(await portFree(d.httpPort)).toBe(true);
    expect(await portFree(d.smtpPort)).toBe(true);
    expect(fs.existsSync(path.join(d.dataDir, 'daemon.lock'))).toBe(false);
    expect(await missingOnDisk(d.dataDir, load.accepted)).toEqual([]);
    // `store check` reads LMDB's data file; PostgreSQL keeps its own consistency.
    if (TEST_STORE_ENGINE !== 'lmdb') return;
    const check = await runCli(['store', 'check'], { POSTRIDER_DATA_DIR: d.dataDir });
    expect(check.code, check.stderr).toBe(0);
    expect(check.stdout).toContain(': ok');
  }, 60_000);
});
