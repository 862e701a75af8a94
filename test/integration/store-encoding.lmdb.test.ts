/**
 * A test of the LMDB engine itself (src/store/lmdb/), not of the store port: raw access to the
 * engine (its write, databases and internal functions) is allowed here, as in every
 * *.lmdb.test.ts, and nowhere else in test/.
 *
 * The store writes values as plain MessagePack maps (store/env.ts DB_OPTIONS); stores written
 * before that hold msgpackr records, each with its record definition inline. Both must read as
 * the same objects, through the store's own verbs (an LMDB engine test: it writes the old
 * encoding with lmdb itself).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { open } from 'lmdb';
import { afterEach, describe, expect, it } from 'vitest';
import type { Account } from '../../src/domain/types.js';
import { LmdbStore } from '../../src/store/lmdb/engine.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function account(name: string): Account {
  const now = new Date().toISOString();
  return { id: randomUUID(), name, state: 'active', createdAt: now, updatedAt: now };
}

/** Puts values as an older postrider wrote them: lmdb-js's default msgpackr records. */
async function putAsRecords(dataDir: string, values: Account[]): Promise<void> {
  const root = open({ path: path.join(dataDir, 'db'), maxDbs: 64 });
  try {
    const accounts = root.openDB('accounts', {});
    await root.transaction(() => {
      for (const v of values) accounts.put(v.id, v);
    });
  } finally {
    await root.close();
  }
}

describe('store value encoding', () => {
  it('reads values written as records, and values written now, as the same objects', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-encoding-'));
    dirs.push(dataDir);
    let store = new LmdbStore({ dataDir });
    await store.start();
    await store.stop();
    const old = [account('older one'), account('older two')];
    await putAsRecords(dataDir, old);
    store = new LmdbStore({ dataDir });
    await store.start();
    try {
      const fresh = await store.accounts.create({ name: 'written now', state: 'pending' });
      for (const a of old) expect(await store.accounts.get(a.id)).toEqual(a);
      expect(await store.accounts.get(fresh.id)).toEqual(fresh);
      expect(Object.getPrototypeOf(await store.accounts.get(fresh.id))).toBe(Object.prototype);
      expect((await store.accounts.list()).map((a) => a.name).sort()).toEqual(['older one', 'older two', 'written now']);
    } finally {
      await store.stop();
    }
  });
});
