/**
 * The expander keeps two writes in flight: each batch names the cursor it starts at, and a batch
 * that does not start at the stored cursor (the write before it failed) rolls back, so no entry
 * is skipped without becoming a message or a failure row.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { acceptBroadcast, advanceBroadcastInTxn, broadcastEntries, getBroadcast, type BroadcastRecord } from '../../src/store/lmdb/broadcasts.js';
import { LmdbStore } from '../../src/store/lmdb/engine.js';

let dir: string;
let store: LmdbStore;

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-broadcast-cursor-'));
  store = new LmdbStore({ dataDir: dir });
  await store.start();
});

afterEach(async () => {
  await store.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

const record: BroadcastRecord = {
  id: 'b1',
  accountId: 'a1',
  channelId: 'c1',
  createdAt: new Date().toISOString(),
  state: 'expanding',
  total: 4,
  cursor: 0,
  messages: 0,
  skipped: 0,
  failed: 0,
  common: {},
};
const progress = (from: number, cursor: number) => ({ from, cursor, messageIds: [], finished: 0, skipped: 0, failures: [], suppressed: [] });

describe('advanceBroadcastInTxn', () => {
  it('rolls back a batch that does not start at the stored cursor, and takes the one that does', async () => {
    await acceptBroadcast(store, { record, entries: ['e0', 'e1', 'e2', 'e3'] });
    // The batch of entries 2-3 while the one of 0-1 never committed: refused, nothing removed.
    await expect(store.write(() => advanceBroadcastInTxn(store, 'b1', progress(2, 4)))).rejects.toThrow(/cursor is at 0/);
    expect(getBroadcast(store, 'b1')).toMatchObject({ cursor: 0, state: 'expanding' });
    expect(broadcastEntries(store, 'b1', 0, 10)).toHaveLength(4);

    await store.write(() => advanceBroadcastInTxn(store, 'b1', progress(0, 2)));
    await store.write(() => advanceBroadcastInTxn(store, 'b1', progress(2, 4)));
    expect(getBroadcast(store, 'b1')).toMatchObject({ cursor: 4, state: 'done' });
    expect(broadcastEntries(store, 'b1', 0, 10)).toHaveLength(0);
  });
});
