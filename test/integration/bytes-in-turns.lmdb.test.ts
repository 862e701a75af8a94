/**
 * A test of the LMDB engine itself (src/store/lmdb/bytes-in-turns.ts): a large received message
 * is read back a part per turn under one held read transaction. The store's stop() in the middle
 * of such a read must wait for it (a view into the map must not outlive the environment), and a
 * value deleted meanwhile is still read whole from the snapshot the read began in.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { binSpan, encodedInTurns } from '../../src/store/lmdb/bytes-in-turns.js';
import { dbsOf } from '../../src/store/lmdb/databases.js';
import { LmdbStore } from '../../src/store/lmdb/engine.js';
import { accepted } from '../store-contract/submissions.js';
import { turnsDuring } from '../support/turns.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

const MiB = 1024 * 1024;

function pattern(size: number): Buffer {
  const b = Buffer.alloc(size);
  for (let i = 0; i + 4 <= size; i += 4) b.writeUInt32LE((i * 2654435761) >>> 0, i);
  return b;
}

async function openStore(): Promise<LmdbStore> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-turns-'));
  dirs.push(dataDir);
  const store = new LmdbStore({ dataDir });
  await store.start();
  return store;
}

async function receive(store: LmdbStore, raw: Buffer): Promise<string> {
  const [m] = await store.inboundMessages.commit({
    receivedAt: new Date(),
    raw,
    messages: [{ routeId: 'route-1', accountId: 'account-1', channelId: 'channel-1', envelope: { mailFrom: 'a@example.org', rcptTo: ['in@acme-shop.com'] }, clientAddress: '192.0.2.7', helo: 'mx.example.org', mailboxHash: null, from: 'a@example.org', subject: 'x' }],
  });
  return m.id;
}

describe('a large value read a part per turn (LMDB)', () => {
  // 8 MiB sits in lmdb-js's reusable read buffer, 20 MiB is answered as a view into the map.
  for (const size of [8 * MiB, 20 * MiB + 3]) {
    it(`stop() waits for a read of ${size} bytes under way, which ends whole`, async () => {
      const store = await openStore();
      const raw = pattern(size);
      const id = await receive(store, raw);
      const reading = store.inboundMessages.raw(id);
      const stopped = store.stop();
      const read = await reading;
      await stopped;
      expect(read!.equals(raw)).toBe(true);
    });
  }

  it('reads the snapshot it began in when the message is deleted meanwhile, while other reads run', async () => {
    const store = await openStore();
    const big = pattern(10 * MiB);
    const other = pattern(3 * MiB).reverse();
    const bigId = await receive(store, big);
    const otherId = await receive(store, other);
    const reading = store.inboundMessages.raw(bigId);
    // Another read of a large value between the turns (it fills lmdb-js's reusable buffer), and
    // the message's removal, committed while the first read holds its snapshot.
    const [second] = await Promise.all([store.inboundMessages.raw(otherId), store.write(() => dbsOf(store).inboundRaw.remove(bigId))]);
    expect((await reading)!.equals(big)).toBe(true);
    expect(second!.equals(other)).toBe(true);
    expect(await store.inboundMessages.raw(bigId)).toBeUndefined();
    await store.stop();
  });
});

describe('a large value encoded ahead of its write (LMDB)', () => {
  it('stores the very bytes msgpackr stores for the Buffer, and leaves a value up to a MiB to msgpackr', async () => {
    const store = await openStore();
    const big = pattern(2 * MiB + 7);
    const encoded = await encodedInTurns(big);
    expect(encoded).toBeDefined();
    expect(await encodedInTurns(pattern(MiB))).toBeUndefined();
    const dbs = dbsOf(store);
    await store.write(() => {
      dbs.inboundRaw.put('as msgpackr writes it', big);
      dbs.inboundRaw.put('encoded ahead', encoded);
    });
    expect(Buffer.from(dbs.inboundRaw.getBinary('encoded ahead')!).equals(Buffer.from(dbs.inboundRaw.getBinary('as msgpackr writes it')!))).toBe(true);
    expect(Buffer.from(dbs.inboundRaw.get('encoded ahead') as Uint8Array).equals(big)).toBe(true);
    await store.stop();
  });

  it('commits a received message over a MiB for every routed copy, each read back whole', async () => {
    const store = await openStore();
    const raw = pattern(3 * MiB + 1);
    const route = { accountId: 'account-1', channelId: 'channel-1', envelope: { mailFrom: 'a@example.org', rcptTo: ['in@acme-shop.com'] }, clientAddress: '192.0.2.7', helo: 'mx.example.org', mailboxHash: null, from: 'a@example.org', subject: 'x' };
    const made = await store.inboundMessages.commit({ receivedAt: new Date(), raw, messages: [{ routeId: 'route-1', ...route }, { routeId: 'route-2', ...route }] });
    expect(made).toHaveLength(2);
    for (const m of made) expect((await store.inboundMessages.raw(m.id))!.equals(raw)).toBe(true);
    await store.stop();
  });
});

describe('a large message body read on the hot paths (LMDB)', () => {
  it('reads a body over a MiB a part per turn in body(), withBody() and unfinished(), and a small one at once', async () => {
    const store = await openStore();
    const m = accepted({ sign: 'sender.test' });
    const body = pattern(4 * MiB + 9);
    await store.messages.commit({ messages: [{ ...m, body }] });
    for (const read of [
      async () => (await store.messages.unfinished(m.record.id))!.body!,
      async () => (await store.messages.body(m.record.id))!,
    ]) {
      const { value: got, turns } = await turnsDuring(read);
      expect(Buffer.from(got).equals(body)).toBe(true);
      expect(turns).toBeGreaterThanOrEqual(4);
    }
    const small = accepted();
    await store.messages.commit({ messages: [small] });
    expect(Buffer.from((await store.messages.body(small.record.id))!).equals(Buffer.from(small.body!))).toBe(true);
    await store.stop();
  });
});

describe('binSpan (MessagePack bin family)', () => {
  it('finds the bytes of bin 8, 16 and 32, and nothing in other values or short ones', () => {
    expect(binSpan(Uint8Array.of(0xc4, 2, 7, 8))).toEqual({ start: 2, length: 2 });
    expect(binSpan(Uint8Array.of(0xc5, 0, 1, 9))).toEqual({ start: 3, length: 1 });
    expect(binSpan(Uint8Array.of(0xc6, 0, 0, 0, 2, 1, 2))).toEqual({ start: 5, length: 2 });
    expect(binSpan(Uint8Array.of(0xc6, 0, 0, 0, 9, 1, 2))).toBeNull();
    expect(binSpan(Uint8Array.of(0xa3, 0x61, 0x62, 0x63))).toBeNull();
    expect(binSpan(Uint8Array.of(0xc5, 0))).toBeNull();
  });
});
