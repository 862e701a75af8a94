/**
 * The event log's range partitions (store/postgres/event-partitions.ts, schema/events-stats.ts):
 * the engine adds the next partition ahead of the head, appends that outran it land in the
 * DEFAULT partition without failing, retention drops a partition once the floor has passed it
 * (no reader sees the rows it left below the floor meanwhile), and two nodes maintaining at once
 * add one partition.
 *
 * Widths are tiny (16 seqs) so that nothing big is inserted; the log starts just below the end
 * of migration 1's first partition [1, 65,536) by moving the head (a hole in the seqs, as
 * retention and the channel purge leave).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventRecord } from '../../src/domain/types.js';
import { PostgresStore, pgContextOf } from '../../src/store/postgres/engine.js';
import { appendEvents, type EventDraft } from '../../src/store/postgres/event-log.js';
import { ensurePartitionsAhead, PARTITION_SIZING } from '../../src/store/postgres/event-partitions.js';
import { purgeChannelBatch } from '../../src/store/postgres/channel-purge-batch.js';

const url = process.env.POSTRIDER_TEST_PG_URL;
if (!url) throw new Error('POSTRIDER_TEST_PG_URL is not set: run the PostgreSQL tests with npm run test:pg');

const ACCOUNT = randomUUID();
const CHANNEL: string = randomUUID();
const T0 = Date.parse('2026-05-01T00:00:00Z');
const SIZING = { minWidth: 16, maxWidth: 16 };

let n = 0;
function draft(channelId = CHANNEL): EventDraft {
  n++;
  return {
    accountId: ACCOUNT, channelId, messageId: randomUUID(), mailType: 'transactional', mailSource: 'api', eventType: 'opened',
    timestamp: new Date(T0 + n * 1000).toISOString(), subject: `e${n}`, recipients: [`r${n}@example.net`], tags: ['t'], metadata: {}, details: {},
  };
}

describe('PostgreSQL event log partitions', () => {
  let store: PostgresStore;
  let admin: postgres.Sql;
  const schema = `parts_${randomBytes(5).toString('hex')}`;
  const stored: EventRecord[] = [];

  const append = async (count: number, channelOf: (i: number) => string = (): string => CHANNEL) => {
    const out = await pgContextOf(store).begin((tx) => appendEvents(tx, Array.from({ length: count }, (_, i) => draft(channelOf(i)))));
    stored.push(...out);
    return out;
  };
  /** The range partitions of a table, as "lo-hi", lowest first. */
  const ranges = async (table: string) => {
    const rows = await admin<{ bound: string }[]>`
      SELECT pg_get_expr(c.relpartbound, c.oid) AS bound FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = ${`"${schema}".${table}`}::regclass`;
    return rows
      .map((r) => /FROM \('?(\d+)'?\) TO \('?(\d+)'?\)/.exec(r.bound))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => [Number(m[1]), Number(m[2])])
      .sort((a, b) => a[0] - b[0])
      .map(([lo, hi]) => `${lo}-${hi}`);
  };
  const defaultSeqs = async (table: string) =>
    (await admin.unsafe<{ seq: number }[]>(`SELECT seq::int AS seq FROM "${schema}".${table}_default ORDER BY seq`)).map((r) => r.seq);
  /** The whole log through the port, paged with `after` 3 at a time. */
  const pagedSeqs = async () => {
    const seen: number[] = [];
    let after = 0;
    for (;;) {
      const page = await store.events.page({ accountId: ACCOUNT }, { afterSeq: after, limit: 3 });
      if (page.results.length === 0) return seen;
      seen.push(...page.results.map((e) => e.seq));
      after = page.after;
    }
  };

  beforeAll(async () => {
    admin = postgres(url, { max: 4, onnotice: false });
    store = new PostgresStore({ url, schema, poolSize: 6, partitions: { ...SIZING, everyMs: 3_600_000 } });
    await store.start();
    await admin.unsafe(`UPDATE "${schema}".event_log_head SET last = 65530`);
  });

  afterAll(async () => {
    await store.stop();
    await admin.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await admin.end({ timeout: 5 });
  });

  it('adds the next partition of both tables ahead of the head, and every event stays readable in order', async () => {
    expect(await ranges('events')).toEqual(['1-65536']);
    await store.maintainPartitions();
    expect(await ranges('events')).toEqual(['1-65536', '65536-65552']);
    await append(10); // 65531..65540, across the boundary
    await store.maintainPartitions(); // 65540 + 8 < 65552: not due yet
    expect(await ranges('events')).toEqual(['1-65536', '65536-65552']);
    await append(5); // ..65545: within half a width of the end
    await store.maintainPartitions();
    expect(await ranges('events')).toEqual(['1-65536', '65536-65552', '65552-65568']);
    expect(await ranges('event_terms')).toEqual(await ranges('events'));
    await append(10); // ..65555
    expect(await defaultSeqs('events')).toEqual([]);
    expect(await defaultSeqs('event_terms')).toEqual([]);
    expect(await pagedSeqs()).toEqual(stored.map((e) => e.seq));
    expect((await store.events.page({ accountId: ACCOUNT, recipient: stored[20].recipients[0] }, { afterSeq: 0, limit: 10 })).results).toEqual([stored[20]]);
  });

  it('appends that outran maintenance land in the DEFAULT partition, and the next partition starts above them', async () => {
    await append(20); // ..65575: 65568.. have no range partition
    expect(await defaultSeqs('events')).toEqual([65568, 65569, 65570, 65571, 65572, 65573, 65574, 65575]);
    await store.maintainPartitions();
    const [lo] = (await ranges('events')).at(-1)!.split('-').map(Number);
    expect(lo).toBeGreaterThan(65575);
    expect(await ranges('event_terms')).toEqual(await ranges('events'));
    const later = await append(3);
    // The ones below the new partition (its slack over the head) still go to DEFAULT; none above.
    expect(await defaultSeqs('events')).toEqual([65568, 65569, 65570, 65571, 65572, 65573, 65574, 65575, ...later.map((e) => e.seq).filter((s) => s < lo)]);
    expect(later.at(-1)!.seq).toBeGreaterThanOrEqual(lo);
    expect(await pagedSeqs()).toEqual(stored.map((e) => e.seq));
  });

  it('a retention sweep whose floor passes a partition drops it, and no read returns an event below the floor', async () => {
    const cut = stored.find((e) => e.seq === 65554)!;
    let more = true;
    while (more) more = (await store.retention.sweepBatch({ cutoffMs: Date.parse(cut.timestamp), batch: 7 })).more;
    expect((await store.events.bounds()).floor).toBe(65554);
    // Wholly below the floor: gone. Holding the floor: kept, its rows below the floor still there.
    expect(await ranges('events')).not.toContain('65536-65552');
    expect(await ranges('event_terms')).not.toContain('65536-65552');
    const [{ gone }] = await admin.unsafe<{ gone: boolean }[]>(`SELECT to_regclass('"${schema}".events_p65536') IS NULL AS gone`);
    expect(gone).toBe(true);
    const [{ left }] = await admin.unsafe<{ left: number }[]>(`SELECT count(*)::int AS left FROM "${schema}".events_p65552 WHERE seq < 65554`);
    expect(left).toBe(2);

    const below = stored.filter((e) => e.seq < 65554);
    const kept = stored.filter((e) => e.seq >= 65554).map((e) => e.seq);
    expect(await pagedSeqs()).toEqual(kept);
    for (const e of below.slice(-3)) {
      expect(await store.events.ofMessage(e.messageId)).toEqual([]);
      expect(await store.events.ownerOfMessage(e.messageId)).toBeUndefined();
      expect((await store.events.page({ accountId: ACCOUNT, messageId: e.messageId }, { afterSeq: 0, limit: 5 })).results).toEqual([]);
    }
    const page = await store.events.page({ accountId: ACCOUNT, tags: ['t'] }, { afterSeq: 0, limit: 100 });
    expect(page.totalCount).toBe(kept.length);
    const remains = await store.channels.remains(CHANNEL);
    expect(remains.events).toBe(kept.length);
  });

  it('two maintenance runs racing add one partition', async () => {
    const [, hi] = (await ranges('events')).at(-1)!.split('-').map(Number);
    await admin.unsafe(`UPDATE "${schema}".event_log_head SET last = ${hi - 4}`);
    const sizing = { ...PARTITION_SIZING, ...SIZING };
    const sql = pgContextOf(store).sql;
    const before = (await ranges('events')).length;
    const runs = await Promise.all([ensurePartitionsAhead(sql, sizing), ensurePartitionsAhead(sql, sizing), ensurePartitionsAhead(sql, sizing)]);
    expect(runs.flat().map((r) => r.name).sort()).toEqual([`event_terms_p${hi}`, `events_p${hi}`]);
    expect(await ranges('events')).toHaveLength(before + 1);
    expect((await ranges('events')).at(-1)).toBe(`${hi}-${hi + 16}`);
    expect(await ranges('event_terms')).toEqual(await ranges('events'));
  });

  it('the channel purge removes only the channel\'s rows where two partitions hold rows at the same places', async () => {
    // Two fresh partitions of 16: the first half of one and the second half of the other are the
    // purged channel's, so the same ctids name its rows in one and the kept channel's in the other.
    const gone = randomUUID();
    const [, hi] = (await ranges('events')).at(-1)!.split('-').map(Number);
    const headAt = (last: number) => admin.unsafe(`UPDATE "${schema}".event_log_head SET last = ${last}`);
    await headAt(hi - 8);
    await store.maintainPartitions();
    await headAt(hi + 8);
    await store.maintainPartitions();
    await headAt(hi - 1);
    expect((await ranges('events')).slice(-2)).toEqual([`${hi}-${hi + 16}`, `${hi + 16}-${hi + 32}`]);
    const written = await append(32, (i) => ((i < 16) === (i % 16 < 8) ? gone : CHANNEL));
    await admin.unsafe(`INSERT INTO "${schema}".channel_purges (channel_id, account_id, deleted_at_ms) VALUES ('${gone}', '${ACCOUNT}', 0)`);
    const ctx = pgContextOf(store);
    while (!(await purgeChannelBatch(ctx, gone, 5)).done);
    const left = (await pagedSeqs()).filter((s) => s >= hi);
    expect(left).toEqual(written.filter((e) => e.channelId === CHANNEL).map((e) => e.seq));
    expect((await store.channels.remains(gone)).events).toBe(0);
    expect((await store.channels.remains(gone)).indexEntries).toBe(0);
  });
});
