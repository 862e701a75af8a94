/**
 * A test of the LMDB engine itself (src/store/lmdb/), not of the store port: raw access to the
 * engine (its write, databases and internal functions) is allowed here, as in every
 * *.lmdb.test.ts, and nowhere else in test/.
 *
 * The store's own guards, on real LMDB files in temp folders: the meta-page reader agrees with
 * LMDB's environment info (so an lmdb upgrade that moves a field fails here first), the folder
 * marker turns a lost data.mdb into a refusal, stop() lets writes in flight finish and refuses
 * new ones, and healthy() turns false when reads fail.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { open } from 'lmdb';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { inspectDataFile } from '../../src/store/lmdb/data-file.js';
import { LmdbStore } from '../../src/store/lmdb/engine.js';
import { MARKER_FILE } from '../../src/store/lmdb/marker.js';
import { StoreProblem } from '../../src/store/port/problems.js';
import { addSuppressionInTxn, listSuppressions } from '../../src/store/lmdb/suppressions.js';

let dir: string;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-integrity-'));
});

afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

async function withStore<T>(fn: (s: LmdbStore) => Promise<T>): Promise<T> {
  const s = new LmdbStore({ dataDir: dir });
  await s.start();
  try {
    return await fn(s);
  } finally {
    await s.stop();
  }
}

/** n writes of about 200 bytes each: suppressions of one channel, counted by listSuppressions. */
async function fill(s: LmdbStore, n: number, prefix = 'fill'): Promise<void> {
  await Promise.all(Array.from({ length: n }, (_, i) => s.write(() => suppress(s, prefix, i))));
}

function suppress(s: LmdbStore, prefix: string, i: number): void {
  addSuppressionInTxn(s, { channelId: prefix, mailType: 'transactional', email: `${i}.${'x'.repeat(180)}@example.net`, reason: 'manual' });
}

const filled = (s: LmdbStore, prefix = 'fill') => listSuppressions(s, prefix).length;

async function startError(): Promise<unknown> {
  return new LmdbStore({ dataDir: dir }).start().then(() => null, (err: unknown) => err);
}

describe('the data file check', () => {
  it('reads the page size, last page and transaction id that LMDB reports', async () => {
    await withStore((s) => fill(s, 2000));
    const info = inspectDataFile(path.join(dir, 'db', 'data.mdb'));
    const env = open({ path: path.join(dir, 'db'), readOnly: true });
    const stats = env.getStats() as { pageSize: number; lastPageNumber: number; lastTxnId: number };
    await env.close();

    expect(info).toMatchObject({ pageSize: stats.pageSize, lastPage: stats.lastPageNumber, txnId: stats.lastTxnId });
    expect(info.lastPage).toBeGreaterThan(10);
    expect(info.sizeBytes).toBeGreaterThanOrEqual((info.lastPage + 1) * info.pageSize);
  });

  it('refuses to read, as no store, an LMDB file without postrider\'s databases (before: a TypeError)', async () => {
    const env = open({ path: path.join(dir, 'db') });
    await env.put('not', 'ours');
    await env.close();
    const err = await new LmdbStore({ dataDir: dir, readOnly: true, mustExist: true }).start().then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(StoreProblem);
    expect(err).toMatchObject({ code: 'no_store', exitCode: 66, message: expect.stringContaining("without postrider's databases") });
  });
});

describe('the data folder marker', () => {
  it('is written at the first start; a deleted data.mdb is then refused instead of starting afresh', async () => {
    await withStore((s) => fill(s, 10));
    expect(fs.readFileSync(path.join(dir, MARKER_FILE), 'utf8')).toMatch(/^postrider store created \d{4}-/);
    fs.rmSync(path.join(dir, 'db', 'data.mdb'));

    const err = await startError();
    expect(err).toBeInstanceOf(StoreProblem);
    expect((err as StoreProblem).code).toBe('store_missing');
    expect(fs.existsSync(path.join(dir, 'db', 'data.mdb'))).toBe(false);
  });

  it('refuses a folder from before the marker that has an initial-api-key but no data.mdb', async () => {
    fs.writeFileSync(path.join(dir, 'initial-api-key'), 'pr_old\n');
    expect(((await startError()) as StoreProblem).code).toBe('store_missing');
  });

  it('adopts a store from before the marker: writes the marker, keeps the data', async () => {
    await withStore((s) => fill(s, 10));
    fs.rmSync(path.join(dir, MARKER_FILE));
    const n = await withStore(async (s) => filled(s));
    expect(n).toBe(10);
    expect(fs.existsSync(path.join(dir, MARKER_FILE))).toBe(true);
  });
});

describe('Store.stop', () => {
  it('lets the writes in flight commit, then refuses new ones', async () => {
    const s = new LmdbStore({ dataDir: dir });
    await s.start();
    const writes = Array.from({ length: 300 }, (_, i) => s.write(() => suppress(s, 'w', i)));
    expect(s.writesInFlight).toBe(300);
    await s.stop();

    expect(s.writesInFlight).toBe(0);
    await expect(Promise.all(writes)).resolves.toHaveLength(300);
    await expect(s.write(() => 1)).rejects.toThrow('store is not open');
    expect(await withStore(async (r) => filled(r, 'w'))).toBe(300);
  });
});

describe('Store.healthy', () => {
  it('is true on a good store, false once reads fail and after stop', async () => {
    const s = new LmdbStore({ dataDir: dir });
    await s.start();
    await fill(s, 500);
    expect(s.healthy()).toBe(true);
    const file = path.join(dir, 'db', 'data.mdb');
    const fd = fs.openSync(file, 'r+');
    const size = fs.fstatSync(fd).size;
    fs.writeSync(fd, Buffer.alloc(size - 8192), 0, size - 8192, 8192); // every page but the two meta pages
    fs.closeSync(fd);

    expect(s.healthy()).toBe(false);
    await s.stop();
    expect(s.healthy()).toBe(false);
  });
});
