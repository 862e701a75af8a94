/**
 * The broadcasts' reads (BroadcastsPort): the record, its counters (the finished/canceled counts
 * and the statistics the event log counts, stats-broadcast.ts, read together), the expander's next
 * broadcast and entries, the failure and suppression pages and a channel's list.
 */
import { zeroCounters, type StatCounters } from '../../domain/stat-counters.js';
import { COUNTER_NAMES } from '../../domain/stat-levels.js';
import type { BroadcastCounters, BroadcastFailure, BroadcastRecord, BroadcastView, Paged } from '../port/broadcasts.js';
import type { Db } from './client.js';

export async function getBroadcast<C>(db: Db, id: string): Promise<BroadcastRecord<C> | undefined> {
  const [row] = await db<{ doc: BroadcastRecord<C> }[]>`SELECT doc FROM broadcasts WHERE id = ${id}`;
  return row?.doc;
}

/**
 * The record, its counts and its statistics as one statement reads them: one snapshot. Read in
 * two statements, a delivery committed between them showed its recipient delivered while the
 * broadcast's completion did not count its message yet (0% beside delivered: 1).
 */
type ViewRow<C> = { doc: BroadcastRecord<C>; finished: number | null; canceled: number | null } & { [K in keyof StatCounters]: number | null };

/** The statistics' columns of broadcast_statistics s, in the counters' order. */
const STAT_COLUMNS = COUNTER_NAMES.map((name) => `s.${name}`).join(', ');
const VIEW_COLUMNS = `b.doc, c.finished, c.canceled, ${STAT_COLUMNS}`;
const VIEW_TABLES = 'broadcasts b LEFT JOIN broadcast_counters c ON c.broadcast_id = b.id LEFT JOIN broadcast_statistics s ON s.broadcast_id = b.id';

function viewOf<C>(r: ViewRow<C>): BroadcastView<C> {
  return { record: r.doc, counters: countersOf(r) };
}

function countersOf(r: Omit<ViewRow<unknown>, 'doc'>): BroadcastCounters {
  const statistics = zeroCounters();
  for (const name of COUNTER_NAMES) statistics[name] = r[name] ?? 0;
  return { finished: r.finished ?? 0, canceled: r.canceled ?? 0, statistics };
}

export async function viewBroadcast<C>(db: Db, id: string): Promise<BroadcastView<C> | undefined> {
  const [row] = await db<ViewRow<C>[]>`SELECT ${db.unsafe(VIEW_COLUMNS)} FROM ${db.unsafe(VIEW_TABLES)} WHERE b.id = ${id}`;
  return row && viewOf(row);
}

/** The counts and statistics of one broadcast, in one statement (see ViewRow). */
export async function broadcastCounters(db: Db, id: string): Promise<BroadcastCounters> {
  const [row] = await db<Omit<ViewRow<unknown>, 'doc'>[]>`
    SELECT c.finished, c.canceled, ${db.unsafe(STAT_COLUMNS)}
    FROM (SELECT ${id}::text AS id) x LEFT JOIN broadcast_counters c ON c.broadcast_id = x.id LEFT JOIN broadcast_statistics s ON s.broadcast_id = x.id`;
  return countersOf(row!);
}

/** The oldest broadcast still expanding whose channel is not deleted (its purge removes it). */
export async function nextActiveBroadcast<C>(db: Db): Promise<BroadcastRecord<C> | undefined> {
  const [row] = await db<{ doc: BroadcastRecord<C> }[]>`
    SELECT b.doc FROM broadcasts b
    WHERE b.state = 'expanding'
      AND NOT EXISTS (SELECT 1 FROM channels c WHERE c.id = b.channel_id AND c.deleted_at_ms IS NOT NULL)
    ORDER BY b.created_ms, b.id LIMIT 1`;
  return row?.doc;
}

export async function broadcastEntries<E>(db: Db, id: string, from: number, count: number): Promise<{ index: number; entry: E }[]> {
  const rows = await db<{ idx: number; entry: E }[]>`
    SELECT idx, entry FROM broadcast_entries WHERE broadcast_id = ${id} AND idx >= ${from} ORDER BY idx LIMIT ${count}`;
  return rows.map((r) => ({ index: r.idx, entry: r.entry }));
}

export async function broadcastFailures(db: Db, id: string, page: { limit: number; offset: number }): Promise<Paged<BroadcastFailure>> {
  const [n] = await db<{ n: number }[]>`SELECT count(*)::int8 AS n FROM broadcast_failures WHERE broadcast_id = ${id}`;
  const rows = await db<{ doc: BroadcastFailure }[]>`
    SELECT doc FROM broadcast_failures WHERE broadcast_id = ${id} ORDER BY idx LIMIT ${page.limit} OFFSET ${page.offset}`;
  return { totalCount: n?.n ?? 0, results: rows.map((r) => r.doc) };
}

export async function broadcastSuppressions(db: Db, id: string, page: { limit: number; offset: number }): Promise<Paged<string>> {
  const [n] = await db<{ n: number }[]>`SELECT count(*)::int8 AS n FROM broadcast_suppressions WHERE broadcast_id = ${id}`;
  const rows = await db<{ email: string }[]>`
    SELECT email FROM broadcast_suppressions WHERE broadcast_id = ${id} ORDER BY email LIMIT ${page.limit} OFFSET ${page.offset}`;
  return { totalCount: n?.n ?? 0, results: rows.map((r) => r.email) };
}

/** Broadcasts read per statement while a channel's list is filtered. */
const LIST_CHUNK = 500;

/**
 * A page of a channel's broadcasts, newest first, among those `match` accepts; totalCount counts
 * every match, so every broadcast of the channel is looked at (as the LMDB engine does), a chunk
 * at a time in (created_ms, id) order from the channel's index.
 */
export async function listChannelBroadcasts<C>(
  db: Db,
  q: { channelId: string; limit: number; offset: number; match: (b: BroadcastView<C>) => boolean },
): Promise<Paged<BroadcastView<C>>> {
  const results: BroadcastView<C>[] = [];
  let totalCount = 0;
  let after: { ms: number; id: string } | undefined;
  for (;;) {
    const rows = await db<(ViewRow<C> & { created_ms: number })[]>`
      SELECT ${db.unsafe(VIEW_COLUMNS)}, b.created_ms FROM ${db.unsafe(VIEW_TABLES)}
      WHERE b.channel_id = ${q.channelId} ${after ? db`AND (b.created_ms, b.id) < (${after.ms}, ${after.id})` : db``}
      ORDER BY b.created_ms DESC, b.id DESC LIMIT ${LIST_CHUNK}`;
    for (const r of rows) {
      const v = viewOf(r);
      if (!q.match(v)) continue;
      if (totalCount >= q.offset && results.length < q.limit) results.push(v);
      totalCount++;
    }
    if (rows.length < LIST_CHUNK) return { totalCount, results };
    const last = rows[rows.length - 1]!;
    after = { ms: last.created_ms, id: last.doc.id };
  }
}
