/**
 * A test of the LMDB engine itself (src/store/lmdb/), not of the store port: raw access to the
 * engine (its write, databases and internal functions) is allowed here, as in every
 * *.lmdb.test.ts, and nowhere else in test/.
 *
 * A test of the LMDB engine's domain cache: store/lmdb/domains.ts decodes a domain record once
 * and hands the same object out while the stored bytes stay the same. Every change must still be
 * seen by the very next read (through the port's verbs), inside a write too (the engine's own
 * getDomain in its Store.write: engine internals, allowed in the engine's tests), and a write
 * that throws must leave the record as it was.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LmdbStore } from '../../src/store/lmdb/engine.js';
import { getDomain } from '../../src/store/lmdb/domains.js';
import type { NewDkimKey } from '../../src/store/port/domains.js';

const key = (selector: string): NewDkimKey => ({ selector, algorithm: 'rsa', privateKeyPem: `pem-${selector}`, dnsValue: 'v=DKIM1; k=rsa; p=AAAA' });

describe('domain reads', () => {
  let dir: string;
  let store: LmdbStore;
  const accountId = randomUUID();

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-domain-reads-'));
    store = new LmdbStore({ dataDir: dir });
    await store.start();
  });
  afterAll(async () => {
    await store.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const create = (name: string) => store.domains.create({ accountId, name, channelIds: [], key: key(`s-${name}`), returnPath: [], maxPerAccount: 100 });

  it('hands out one frozen record while it is unchanged', async () => {
    const d = await create('same.example');
    const first = await store.domains.get(d.id);
    expect(first).toEqual(d);
    expect(await store.domains.get(d.id)).toBe(first);
    expect(await store.domains.findByName(accountId, 'same.example')).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    expect(Object.isFrozen(first!.activeKey.record)).toBe(true);
  });

  it('sees a new pending key at the next read', async () => {
    const d = await create('rotate.example');
    expect((await store.domains.get(d.id))!.pendingKey).toBeNull();
    await store.domains.setPendingKey(d.id, key('next'));
    expect((await store.domains.get(d.id))!.pendingKey?.selector).toBe('next');
  });

  it('sees a change inside the write that made it, and the stored record again when that write throws', async () => {
    const d = await create('abort.example');
    const before = await store.domains.get(d.id);
    await expect(
      store.write(() => {
        const changed = { ...before!, verified: true };
        (store as unknown as { databases(): { domains: { put(k: string, v: unknown): void } } }).databases().domains.put(d.id, changed);
        expect(getDomain(store, d.id)!.verified).toBe(true);
        throw new Error('abandon');
      }),
    ).rejects.toThrow('abandon');
    expect((await store.domains.get(d.id))!.verified).toBe(false);
  });

  it('answers undefined at once after a delete', async () => {
    const d = await create('gone.example');
    expect(await store.domains.get(d.id)).toBeDefined();
    await store.domains.delete(d.id);
    expect(await store.domains.get(d.id)).toBeUndefined();
    expect(await store.domains.findByName(accountId, 'gone.example')).toBeUndefined();
  });
});
