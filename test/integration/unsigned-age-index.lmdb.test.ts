/**
 * A test of the LMDB engine itself (raw databases, writes and *InTxn verbs are its subject): the
 * age index of the messages waiting to be finished (`unsignedByAge`, store/lmdb/signing.ts): the
 * oldest is exact however large the backlog, every removal of a waiting entry takes its index
 * entry with it, and entries written before the index are indexed once at start. What the port
 * promises of it (oldestUnfinishedMs) is in test/store-contract/messages.contract.test.ts.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { schedulePurgeInTxn } from '../../src/store/lmdb/purge-queue.js';
import { purgeChannelBatch } from '../../src/store/lmdb/channel-purge.js';
import { dbsOf } from '../../src/store/lmdb/databases.js';
import type { LmdbStore } from '../../src/store/lmdb/engine.js';
import { awaitingSignatureCount, endUnfinished, indexPendingSignatures, oldestAwaitingSignatureMs, putPendingSignatureInTxn, storeSignedBodies, unsignedMessage, type PendingSignature } from '../../src/store/lmdb/signing.js';
import { ACCOUNT, CHANNEL, openTestStore, queueMessage, type TestStore } from '../support/delivery.js';
import { openLmdbStore } from '../support/lmdb-store.js';

const NOW = Date.parse('2026-03-01T12:00:00Z');
const BODY = Buffer.from('From: a@sender.test\r\n\r\nx');

let t: TestStore<LmdbStore>;

beforeEach(async () => {
  t = await openTestStore(openLmdbStore);
});

afterEach(async () => {
  await t.close();
});

/** A message committed `ago` ms before NOW, waiting for its signature (record, jobs, events: the real commit). */
const waiting = (ago: number) => queueMessage(t.store, { to: ['a@one.test'], signingDomain: 'sender.test', now: new Date(NOW - ago) });

/**
 * `n` waiting entries written straight into the store, in writes of 2,000, the j-th committed
 * 1 s + j ms before NOW. Their ids ('0-…') sort before every UUID, so a walk of the first 10,000
 * keys in key order (the sample the gauge took before the index) never reaches the messages
 * committed with queueMessage.
 */
async function bulkWaiting(store: LmdbStore, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i += 2_000) {
    await store.write(() => {
      for (let j = i; j < Math.min(n, i + 2_000); j++) {
        const id = `0-bulk-${String(j).padStart(6, '0')}`;
        putPendingSignatureInTxn(store, id, { accountId: ACCOUNT, domain: 'sender.test', committedMs: NOW - 1_000 - j });
        ids.push(id);
      }
    });
  }
  return ids;
}

/** What the finishing stage stores for messages that went (or as their finished bodies), in writes of 2,000. */
async function finish(store: LmdbStore, ids: readonly string[]): Promise<void> {
  for (let i = 0; i < ids.length; i += 2_000) await storeSignedBodies(store, ids.slice(i, i + 2_000).map((messageId) => ({ messageId, body: BODY })));
}

/** Every waiting entry has exactly its index entry [committedMs, id], and the index nothing else. */
function expectIndexConsistent(store: LmdbStore): void {
  const dbs = dbsOf(store);
  const entries = [...dbs.unsigned.getRange()].map(({ key, value }) => `${(value as PendingSignature).committedMs}/${String(key)}`);
  const index = [...dbs.unsignedByAge.getKeys()].map((k) => (k as [number, string]).join('/'));
  expect(index.sort()).toEqual(entries.sort());
}

describe('oldestAwaitingSignatureMs with the age index', () => {
  it('is exact with more than 10,000 waiting, the next oldest once the oldest is finished, 0 once none waits', async () => {
    expect(oldestAwaitingSignatureMs(t.store, NOW)).toBe(0);
    const oldest = await waiting(300_000);
    const next = await waiting(200_000);
    const bulk = await bulkWaiting(t.store, 10_500);
    expect(awaitingSignatureCount(t.store)).toBe(10_502);
    expect(oldestAwaitingSignatureMs(t.store, NOW)).toBe(300_000);
    await finish(t.store, [oldest]);
    expect(oldestAwaitingSignatureMs(t.store, NOW)).toBe(200_000);
    await finish(t.store, [next]);
    expect(oldestAwaitingSignatureMs(t.store, NOW)).toBe(1_000 + 10_499); // the oldest of the bulk
    await finish(t.store, bulk);
    expect(oldestAwaitingSignatureMs(t.store, NOW)).toBe(0);
    expectIndexConsistent(t.store);
    expect([...dbsOf(t.store).unsignedByAge.getKeys()]).toEqual([]);
  });

  it('loses the index entry of a message ended unfinished', async () => {
    const ended = await waiting(90_000);
    await waiting(30_000);
    await endUnfinished(t.store, ended, { reason: 'bad template', category: 'other', enhancedCode: '5.6.0' });
    expect(oldestAwaitingSignatureMs(t.store, NOW)).toBe(30_000);
    expectIndexConsistent(t.store);
  });

  it('leaves no orphan when a purged channel\'s waiting messages are finished as gone', async () => {
    const ids = [await waiting(120_000), await waiting(60_000)];
    await t.store.write(() => schedulePurgeInTxn(t.store, { channelId: CHANNEL, accountId: ACCOUNT, deletedAt: new Date(NOW).toISOString() }));
    while (!(await purgeChannelBatch(t.store, CHANNEL, 50)).done);
    // The records went; the entries wait until the finishing stage ends them (its `gone` path: an empty body).
    expect(dbsOf(t.store).messages.doesExist(ids[0]!)).toBe(false);
    expect(oldestAwaitingSignatureMs(t.store, NOW)).toBe(120_000);
    await storeSignedBodies(t.store, ids.map((messageId) => ({ messageId, body: new Uint8Array(0) })));
    expect(awaitingSignatureCount(t.store)).toBe(0);
    expect(oldestAwaitingSignatureMs(t.store, NOW)).toBe(0);
    expectIndexConsistent(t.store);
  });
});

describe('indexPendingSignatures', () => {
  /** Entries as a postrider before the index left them: no committedMs, no index entry, no mark. */
  async function asBeforeTheIndex(store: LmdbStore): Promise<void> {
    await store.write(() => {
      const dbs = dbsOf(store);
      for (const { key, value } of [...dbs.unsigned.getRange()]) {
        const { committedMs: _, ...older } = value as PendingSignature;
        dbs.unsigned.put(key, older);
      }
      for (const k of [...dbs.unsignedByAge.getKeys()]) dbs.unsignedByAge.remove(k);
      dbs.meta.remove('unsignedByAgeIndexed');
    });
  }

  it('indexes the entries of an older store once at start, a page per write: the oldest is exact after it', async () => {
    const oldest = await waiting(300_000);
    const gone = await waiting(400_000);
    await waiting(5_000);
    await bulkWaiting(t.store, 250);
    await t.store.write(() => dbsOf(t.store).messages.remove(gone)); // its record went before the upgrade
    await asBeforeTheIndex(t.store);
    await t.reopen();
    expect(oldestAwaitingSignatureMs(t.store, NOW)).toBe(0); // nothing indexed yet

    const startedAt = Date.now();
    expect(await indexPendingSignatures(t.store, 40)).toBe(253);
    // The entry without a record counts as committed at the backfill: younger than any NOW-based age here.
    expect(oldestAwaitingSignatureMs(t.store, NOW)).toBe(300_000);
    expect((dbsOf(t.store).unsigned.get(gone) as PendingSignature).committedMs).toBeGreaterThanOrEqual(startedAt);
    expectIndexConsistent(t.store);
    expect(await indexPendingSignatures(t.store, 40)).toBe(0); // once per data folder

    // A backfilled entry whose record goes afterwards still leaves no orphan.
    await t.store.write(() => dbsOf(t.store).messages.remove(oldest));
    await storeSignedBodies(t.store, [oldest, gone].map((messageId) => ({ messageId, body: new Uint8Array(0) })));
    expectIndexConsistent(t.store);
    expect(oldestAwaitingSignatureMs(t.store, NOW)).toBe(5_000);
  });

  it('marks an empty store indexed', async () => {
    expect(await indexPendingSignatures(t.store)).toBe(0);
    expect(dbsOf(t.store).meta.get('unsignedByAgeIndexed')).toBe(true);
  });
});

describe('unsignedMessage', () => {
  it('reads the channel from the entry, and from the record for an entry written before the entry kept it', async () => {
    const fresh = await waiting(1_000);
    const older = await waiting(2_000);
    const dbs = dbsOf(t.store);
    expect((dbs.unsigned.get(fresh) as PendingSignature).channelId).toBe(CHANNEL);
    const { channelId: _c, ...withoutChannel } = dbs.unsigned.get(older) as PendingSignature;
    await t.store.write(() => dbs.unsigned.put(older, withoutChannel));
    expect(await unsignedMessage(t.store, fresh)).toMatchObject({ accountId: ACCOUNT, gone: false });
    expect(await unsignedMessage(t.store, older)).toMatchObject({ accountId: ACCOUNT, gone: false });
    expect(await unsignedMessage(t.store, fresh)).not.toHaveProperty('channelId');
    // The channel deleted (its tombstone): both are gone, whichever way their channel was found.
    await t.store.write(() => dbs.channels.put(CHANNEL, { ...(dbs.channels.get(CHANNEL) as object | undefined), deletedAt: new Date(NOW).toISOString() }));
    expect(await unsignedMessage(t.store, fresh)).toMatchObject({ gone: true });
    expect(await unsignedMessage(t.store, older)).toMatchObject({ gone: true });
  });
});
