/**
 * The `after` cursor guarantee of the PostgreSQL engine (store/port/events.ts: a reader never
 * sees seq n while a lower seq can still commit), with concurrent writers: appendEvents
 * (store/postgres/event-log.ts) gives seqs under the event_log_head row lock, so seqs commit in
 * order and every snapshot holds a prefix of the log.
 *
 * First a control: the same interleaving over a plain sequence (nextval, then a slow commit)
 * does skip an event — the race is real and this test would see it. Then the engine under that
 * interleaving, and under many writers at once (pg_sleep inside some transactions, before and
 * after their append, some rolled back) while readers page with `after` in a loop: every
 * committed event is seen exactly once, in seq order, and no rolled-back one ever.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventRecord } from '../../src/domain/types.js';
import { PostgresStore, pgContextOf } from '../../src/store/postgres/engine.js';
import { appendEvents, type EventDraft } from '../../src/store/postgres/event-log.js';
import type { ActivityFilter } from '../../src/store/port/events.js';

const url = process.env.POSTRIDER_TEST_PG_URL;
if (!url) throw new Error('POSTRIDER_TEST_PG_URL is not set: run the PostgreSQL tests with npm run test:pg');

const ACCOUNT = randomUUID();
const CHANNELS = [randomUUID(), randomUUID()];
const T0 = Date.parse('2026-05-01T00:00:00Z');

let n = 0;
function draft(channelId = CHANNELS[0]): EventDraft {
  n++;
  return {
    accountId: ACCOUNT, channelId, messageId: randomUUID(), mailType: 'transactional', mailSource: 'api', eventType: 'opened',
    timestamp: new Date(T0 + n).toISOString(), subject: `e${n}`, recipients: ['r@example.net'], tags: [], metadata: {}, details: {},
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A reader tailing the log: pages with `after` from where it left off. */
function tail(store: PostgresStore, f: ActivityFilter) {
  const seen: number[] = [];
  let after = 0;
  return {
    seen,
    async page(limit = 3): Promise<number> {
      const page = await store.events.page(f, { afterSeq: after, limit });
      seen.push(...page.results.map((e) => e.seq));
      if (page.results.length > 0 || page.partial) after = page.after;
      return page.results.length;
    },
  };
}

describe('PostgreSQL event log: the after cursor under concurrent writers', () => {
  let store: PostgresStore;
  let admin: postgres.Sql;
  const schema = `cursor_${randomBytes(5).toString('hex')}`;

  beforeAll(async () => {
    store = new PostgresStore({ url, schema, poolSize: 24 });
    await store.start();
    admin = postgres(url, { max: 4, onnotice: false });
  });

  afterAll(async () => {
    await store.stop();
    await admin.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await admin.end({ timeout: 5 });
  });

  it('control: seqs from a plain sequence skip an event when a lower seq commits after a higher one', async () => {
    await admin.unsafe(`CREATE TABLE "${schema}".naive (seq bigserial PRIMARY KEY)`);
    let seenAfterB: number[] = [];
    const slow = admin.begin(async (tx) => {
      await tx.unsafe(`INSERT INTO "${schema}".naive DEFAULT VALUES`);
      await tx.unsafe('SELECT pg_sleep(0.4)');
    });
    await sleep(100);
    await admin.begin((tx) => tx.unsafe(`INSERT INTO "${schema}".naive DEFAULT VALUES`));
    seenAfterB = (await admin.unsafe<{ seq: number }[]>(`SELECT seq::int AS seq FROM "${schema}".naive ORDER BY seq`)).map((r) => r.seq);
    await slow;
    const cursor = Math.max(...seenAfterB);
    const later = (await admin.unsafe<{ seq: number }[]>(`SELECT seq::int AS seq FROM "${schema}".naive WHERE seq > ${cursor}`)).map((r) => r.seq);
    // The reader saw seq 2 only; seq 1 committed later, below its cursor: skipped for good.
    expect(seenAfterB).toEqual([2]);
    expect(later).toEqual([]);
  });

  it('a reader never sees a later append while an earlier appender has not committed', async () => {
    const ctx = pgContextOf(store);
    const f = { accountId: ACCOUNT };
    const reader = tail(store, f);
    while ((await reader.page(100)) > 0);
    let firstCommitted = false;
    const first = ctx.begin(async (tx) => {
      const out = await appendEvents(tx, [draft()]);
      await tx`SELECT pg_sleep(0.5)`;
      return out;
    }).finally(() => (firstCommitted = true));
    await sleep(100);
    let secondDone = false;
    // Another channel: no statistics counter row in common with the first (whose row lock would also make it wait).
    const second = ctx.begin((tx) => appendEvents(tx, [draft(CHANNELS[1])])).finally(() => (secondDone = true));
    await sleep(150);
    // The second appender waits at the head row; the reader sees neither event yet.
    expect(secondDone).toBe(false);
    expect(await reader.page()).toBe(0);
    const [a] = await first;
    expect(firstCommitted).toBe(true);
    const [b] = await second;
    expect(b.seq).toBe(a.seq + 1);
    while ((await reader.page()) > 0);
    expect(reader.seen.slice(-2)).toEqual([a.seq, b.seq]);
  });

  it('many writers at once (slow, rolled back, batched) and readers paging with after: every committed event once, in order', async () => {
    const ctx = pgContextOf(store);
    const committed: EventRecord[] = [];
    const rolledBack = new Set<string>();
    const writer = async (w: number) => {
      for (let round = 0; round < 6; round++) {
        const drafts = Array.from({ length: 1 + ((w + round) % 4) }, (_, i) => draft(CHANNELS[(w + i) % 2]));
        const rollback = (w * 7 + round) % 5 === 0;
        try {
          const stored = await ctx.begin(async (tx) => {
            if (w % 3 === 0) await tx`SELECT pg_sleep(${(w % 4) * 0.01})`;
            const out = await appendEvents(tx, drafts);
            if (w % 2 === 0) await tx`SELECT pg_sleep(${0.005 + (round % 3) * 0.01})`;
            if (rollback) throw new Error('roll back');
            return out;
          });
          committed.push(...stored);
        } catch (err) {
          if ((err as Error).message !== 'roll back') throw err;
          for (const d of drafts) rolledBack.add(d.subject);
        }
      }
    };
    const readers = [tail(store, { accountId: ACCOUNT }), tail(store, { accountId: ACCOUNT, channelId: CHANNELS[1] })];
    for (const r of readers) while ((await r.page(100)) > 0);
    let writing = true;
    const writers = Promise.all(Array.from({ length: 12 }, (_, w) => writer(w))).finally(() => (writing = false));
    const reading = readers.map(async (r) => {
      while (writing) {
        await r.page();
        await sleep(1);
      }
    });
    await Promise.all([writers, ...reading]);
    for (const r of readers) while ((await r.page(50)) > 0);

    expect(committed.length).toBeGreaterThan(40);
    expect(rolledBack.size).toBeGreaterThan(0);
    const all = (await store.events.page({ accountId: ACCOUNT }, { afterSeq: 0, limit: 10_000 })).results;
    expect(all.some((e) => rolledBack.has(e.subject))).toBe(false);
    const wantAll = all.map((e) => e.seq);
    const wantChannel = all.filter((e) => e.channelId === CHANNELS[1]).map((e) => e.seq);
    // Seen while writing, then drained: exactly the log, in order, nothing twice, nothing skipped.
    expect(readers[0].seen).toEqual(wantAll);
    expect(readers[1].seen).toEqual(wantChannel);
    for (const e of committed) expect(readers[0].seen).toContain(e.seq);
    // Rolled-back appends gave their seqs back: the log is one run without holes.
    expect(wantAll).toEqual(Array.from({ length: wantAll.length }, (_, i) => wantAll[0] + i));
    expect(await store.events.bounds()).toEqual({ floor: 1, last: wantAll[wantAll.length - 1] });
  });
});
