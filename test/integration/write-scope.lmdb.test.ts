/**
 * A test of the LMDB engine itself (src/store/lmdb/), not of the store port: raw access to the
 * engine (its write, databases and internal functions) is allowed here, as in every
 * *.lmdb.test.ts, and nowhere else in test/.
 *
 * An LMDB engine test (raw writes allowed): a write defers the event log's meta values and the
 * statistics counters to its end (store/lmdb/write-scope.ts). The same events must leave the
 * same answers (read through the port's StatisticsPort, and the engine's seq and clock) whether
 * they come one per write or hundreds in one, and a write that throws must leave nothing of what
 * it deferred.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventRecord } from '../../src/domain/types.js';
import { LmdbStore } from '../../src/store/lmdb/engine.js';
import { appendEventInTxn, firstSeqAtClock, lastEventSeq } from '../../src/store/lmdb/events.js';
import { TAGS, rng } from '../support/events.js';

const HOUR = 3_600_000;
const START = Date.UTC(2026, 2, 1, 22, 0, 0);
const ACCOUNT = randomUUID();
const CHANNELS = [randomUUID(), randomUUID()];

/** Messages with a life: processed, then delivered or bounced (some bounced after a delivery), opens, clicks. */
function drafts(count: number, seed: number): Omit<EventRecord, 'seq'>[] {
  const rand = rng(seed);
  const out: Omit<EventRecord, 'seq'>[] = [];
  const types = ['processed', 'delivered', 'bounced', 'opened', 'clicked', 'bounced', 'complained', 'accepted'] as const;
  for (let i = 0; out.length < count; i++) {
    const messageId = randomUUID();
    const recipients = ['ann@example.net', 'Bob@example.org', 'cy@example.com'].filter(() => rand() < 0.6);
    const base = {
      accountId: ACCOUNT,
      channelId: CHANNELS[i % 2]!,
      messageId,
      mailType: rand() < 0.5 ? ('transactional' as const) : ('broadcast' as const),
      mailSource: 'api' as const,
      subject: 's',
      tags: TAGS.filter(() => rand() < 0.4),
      metadata: {},
      details: {},
    };
    for (const eventType of types.filter(() => rand() < 0.7)) {
      // Spread over two days and across midnight, some stamped late.
      const ms = START + Math.floor(rand() * 30 * HOUR) - (rand() < 0.1 ? 10 * 60_000 : 0);
      out.push({ ...base, eventType, timestamp: new Date(ms).toISOString(), recipients: recipients.length > 0 ? recipients : ['dee@example.net'] });
    }
  }
  return out.slice(0, count);
}

/** Everything the readers can tell about the counters and the log's meta. */
async function answers(store: LmdbStore) {
  const scopes = [{}, { channelIds: [CHANNELS[0]!] }, { tags: ['welcome'] }, { tags: ['billing', 'news'] }, { channelIds: [CHANNELS[1]!], tags: TAGS }];
  const edges = Array.from({ length: 33 }, (_, i) => START - 2 * HOUR + i * HOUR);
  return {
    last: lastEventSeq(store),
    clock: edges.map((ms) => firstSeqAtClock(store, ms)),
    totals: await Promise.all(scopes.map((s) => store.stats.totals({ accountId: ACCOUNT, fromDay: 0, toDay: Number.MAX_SAFE_INTEGER, ...s }))),
    series: await Promise.all(scopes.map((s) => store.stats.series({ accountId: ACCOUNT, edgesMs: edges, ...s }))),
  };
}

describe('deferred counters and event log meta', () => {
  const dirs: string[] = [];
  const stores: LmdbStore[] = [];
  const open = async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'postrider-write-scope-'));
    dirs.push(dir);
    const store = new LmdbStore({ dataDir: dir });
    await store.start();
    stores.push(store);
    return store;
  };
  const events = drafts(600, 7);
  let one: LmdbStore;
  let batched: LmdbStore;

  beforeAll(async () => {
    one = await open();
    batched = await open();
    for (const d of events) await one.write(() => appendEventInTxn(one, d));
    for (let i = 0; i < events.length; i += 250) await batched.write(() => events.slice(i, i + 250).forEach((d) => appendEventInTxn(batched, d)));
  });

  afterAll(async () => {
    for (const s of stores) await s.stop();
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  it('gives the same totals, series, seqs and clock for events one per write and 250 per write', async () => {
    const a = await answers(one);
    expect(a.last).toBe(events.length);
    expect(a.totals[0]!.transactional.sent + a.totals[0]!.broadcast.sent).toBeGreaterThan(0);
    expect(await answers(batched)).toEqual(a);
  });

  it('sees its own seqs inside the write, and a write that throws leaves neither seqs nor counters behind', async () => {
    const before = await answers(batched);
    const inside: number[] = [];
    await expect(
      batched.write(() => {
        for (const d of events.slice(0, 50)) {
          appendEventInTxn(batched, d);
          inside.push(lastEventSeq(batched));
        }
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(inside).toEqual(Array.from({ length: 50 }, (_, i) => events.length + i + 1));
    expect(await answers(batched)).toEqual(before);
    const next = await batched.write(() => appendEventInTxn(batched, events[0]!));
    expect(next.seq).toBe(events.length + 1);
  });

  it('gives the same answers when the writes of one group commit defer together, and one that throws takes back only its own', async () => {
    const kept = events.filter((_, i) => i % 7 !== 3);
    const ref = await open();
    for (const d of kept) await ref.write(() => appendEventInTxn(ref, d));
    const grouped = await open();
    // All started in one turn: they join one group commit (store/lmdb/write-batch.ts).
    const writes = events.map((d, i) =>
      grouped.write(() => {
        const e = appendEventInTxn(grouped, d);
        if (i % 7 === 3) throw new Error(`write ${i} rolled back`);
        return e.seq;
      }),
    );
    const settled = await Promise.allSettled(writes);
    expect(settled.filter((s) => s.status === 'rejected')).toHaveLength(events.length - kept.length);
    expect(settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []))).toEqual(kept.map((_, i) => i + 1));
    expect(await answers(grouped)).toEqual(await answers(ref));
  });

  it('hands out distinct seqs when a write is started inside another write (lmdb-js runs it nested at once)', async () => {
    const store = await open();
    let inner: Promise<EventRecord[]> | undefined;
    const outer = await store.write(() => {
      const first = events.slice(0, 3).map((d) => appendEventInTxn(store, d));
      inner = store.write(() => events.slice(3, 6).map((d) => appendEventInTxn(store, d)));
      return [...first, ...events.slice(6, 9).map((d) => appendEventInTxn(store, d))];
    });
    const seqs = [...outer, ...(await inner!)].map((e) => e.seq).sort((a, b) => a - b);
    expect(seqs).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(lastEventSeq(store)).toBe(9);
  });

  it('rolls back a write that returns the promise of a write started inside it that threw, as lmdb-js did', async () => {
    const store = await open();
    const outer = store.write(() => {
      appendEventInTxn(store, events[0]!);
      return store.write(() => {
        appendEventInTxn(store, events[1]!);
        throw new Error('inner failed');
      });
    });
    const beside = store.write(() => appendEventInTxn(store, events[2]!).seq);
    await expect(outer).rejects.toThrow('inner failed');
    // The other write of the same group commit keeps its event, and gets seq 1.
    expect(await beside).toBe(1);
    expect(lastEventSeq(store)).toBe(1);
  });
});
