/**
 * A backup killed mid-copy leaves its private folder behind (store/lmdb/backup-leftovers.ts); the
 * next backup into the same folder removes it, and leaves alone a folder whose backup still runs.
 * A real store in a temp folder; "killed" is a folder whose owner process has exited.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimBackupFolder, removeKilledBackups } from '../../src/store/lmdb/backup-leftovers.js';
import { dbsOf } from '../../src/store/lmdb/databases.js';
import { LmdbStore } from '../../src/store/lmdb/engine.js';

let root: string;
let store: LmdbStore;

beforeAll(async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-backup-leftovers-'));
  store = new LmdbStore({ dataDir: path.join(root, 'data') });
  await store.start();
  await store.write(() => dbsOf(store).bodies.put('body-1', Buffer.alloc(10_000, 7)));
});

afterAll(async () => {
  await store?.stop();
  fs.rmSync(root, { recursive: true, force: true });
});

/** A folder as a backup makes it, owned by `owner` (null: no owner file), with a partial copy in it. */
function leftover(dir: string, name: string, owner: number | null): string {
  const folder = path.join(dir, `incomplete-backup-${name}`);
  fs.mkdirSync(folder, { recursive: true });
  fs.writeFileSync(path.join(folder, 'data.mdb'), Buffer.alloc(8192));
  if (owner !== null) fs.writeFileSync(path.join(folder, 'owner'), `${owner}\n`);
  return folder;
}

describe('store backup after a killed one', () => {
  it('removes the folders of backups whose process is gone and keeps a running one', async () => {
    const dir = path.join(root, 'backup');
    const exited = spawnSync(process.execPath, ['-e', '0']);
    expect(exited.status).toBe(0);
    const killed = leftover(dir, 'killed', exited.pid!);
    const running = leftover(dir, 'running', process.pid);
    const oldUnowned = leftover(dir, 'old', null);
    const past = new Date(Date.now() - 5 * 60_000);
    fs.utimesSync(oldUnowned, past, past);
    const newUnowned = leftover(dir, 'new', null);
    fs.writeFileSync(path.join(dir, 'notes.txt'), 'kept');

    const { file, removed } = await store.backup(dir, true);

    expect(removed.sort()).toEqual([killed, oldUnowned].sort());
    expect(fs.readdirSync(dir).sort()).toEqual(['data.mdb', path.basename(newUnowned), 'notes.txt', path.basename(running)].sort());
    expect(fs.statSync(file).size).toBeGreaterThan(10_000);
  });

  it('names the process that writes a folder, so a backup beside it keeps that folder', () => {
    const dir = path.join(root, 'own');
    fs.mkdirSync(dir);
    const folder = claimBackupFolder(dir);
    expect(fs.readFileSync(path.join(folder, 'owner'), 'utf8')).toBe(`${process.pid}\n`);
    expect(fs.statSync(folder).mode & 0o777).toBe(0o700);
    expect(removeKilledBackups(dir)).toEqual([]);
    expect(fs.readdirSync(dir)).toEqual([path.basename(folder)]);
  });
});
