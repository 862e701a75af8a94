/**
 * `postrider store backup` tells where a long copy is (store/lmdb/env.ts backup, its progress
 * reports): LMDB copies in a thread of its own, and the copy's file is watched meanwhile. A real
 * store of about 40 MiB in a temp folder, reported every millisecond.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inspectDataFile } from '../../src/store/lmdb/data-file.js';
import { dbsOf } from '../../src/store/lmdb/databases.js';
import { LmdbStore } from '../../src/store/lmdb/engine.js';

let root: string;
let store: LmdbStore;

beforeAll(async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-backup-progress-'));
  store = new LmdbStore({ dataDir: path.join(root, 'data') });
  await store.start();
  // 400 bodies of 100 KB, each an overflow run of its own: 40 MB the copy must write.
  await store.write(() => {
    for (let i = 0; i < 400; i++) dbsOf(store).bodies.put(`body-${String(i).padStart(4, '0')}`, Buffer.alloc(100_000, i % 251));
  });
});

afterAll(async () => {
  await store?.stop();
  fs.rmSync(root, { recursive: true, force: true });
});

describe('store backup progress', () => {
  it('reports the bytes written so far against the bytes the store has in use, while it copies', async () => {
    const { lastPage, pageSize } = inspectDataFile(store.file);
    const inUse = (lastPage + 1) * pageSize;
    const reports: Array<[number, number]> = [];
    const { file: copy } = await store.backup(path.join(root, 'backup'), true, { report: (written, total) => reports.push([written, total]), everyMs: 1 });
    const size = fs.statSync(copy).size;
    expect(size).toBeGreaterThan(40_000_000);
    expect(reports.length).toBeGreaterThan(0);
    for (const [written, total] of reports) {
      expect(total).toBe(inUse);
      expect(written).toBeLessThanOrEqual(size);
    }
    // Growing only: each report at least the one before.
    expect(reports.every(([w], i) => i === 0 || w >= reports[i - 1][0])).toBe(true);
    // The private folder the copy was written in is gone.
    expect(fs.readdirSync(path.join(root, 'backup'))).toEqual(['data.mdb']);
  });
});
