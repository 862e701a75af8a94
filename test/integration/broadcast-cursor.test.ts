/**
 * The expander keeps two writes in flight: each batch names the cursor it starts at, and a batch
 * that does not start at the stored cursor (the write before it failed) rolls back, so no entry
 * is skipped without becoming a message or a failure row.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { BroadcastRecord } from '../../src/store/port/broadcasts.js';
import type { StorePort } from '../../src/store/port/index.js';
import { openStore } from '../support/store.js';

let dir: string;
let store: StorePort;

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-broadcast-cursor-'));
  store = await openStore(dir);
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
/** A batch of no messages (every entry a failure row elsewhere): only the cursor moves. */
const batch = (from: number, cursor: number) => ({ messages: [], broadcastProgress: { broadcastId: 'b1', from, cursor, skipped: 0, failures: [], suppressed: [] } });

describe("a broadcast batch's commit", () => {
  it('rolls back a batch that does not start at the stored cursor, and takes the one that does', async () => {
    await store.broadcasts.accept({ record, entries: ['e0', 'e1', 'e2', 'e3'] });
    // The batch of entries 2-3 while the one of 0-1 never committed: refused, nothing removed.
    await expect(store.messages.commit(batch(2, 4))).rejects.toThrow(/cursor is at 0/);
    expect(await store.broadcasts.get('b1')).toMatchObject({ cursor: 0, state: 'expanding' });
    expect(await store.broadcasts.entries('b1', 0, 10)).toHaveLength(4);

    await store.messages.commit(batch(0, 2));
    await store.messages.commit(batch(2, 4));
    expect(await store.broadcasts.get('b1')).toMatchObject({ cursor: 4, state: 'done' });
    expect(await store.broadcasts.entries('b1', 0, 10)).toHaveLength(0);
  });
});
