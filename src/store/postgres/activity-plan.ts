/**
 * How a filtered walk over the event log is planned (GET /activity/events, the message list).
 *
 * A walk has a LEAD: the one B-tree that yields the filter's candidate seqs in seq order, chosen
 * most selective first — a message's events (events_message), the queued messages
 * (message_queue), a recipient's or tags' events (event_terms), event types, a channel, a mail
 * type, else the whole account (events_* indexes). A comma list (tags, event types) is the union
 * of one index range per value, merged in seq order. Every candidate is then checked against the
 * whole filter on its events row (a primary-key probe): the RESIDUAL.
 *
 * Bounded cost (store/port/events.ts `partial`, `totalCountExact`): the lead is read with a
 * LIMIT (a page's walk examines at most PAGE_WALK candidates, a count COUNT_WALK), never the
 * whole log; a LIMIT is exact about where the walk stopped, which is what `after` needs on a
 * partial page (a statement_timeout could only abort the walk, not say how far it came).
 *
 * Time bounds become a seq range through the event clock (event_clock: the running maximum of
 * timestamps and the seq that reached it), as in the LMDB engine, then are checked exactly on
 * each candidate's ts_ms. An event stamped more than LATE_EVENT_TOLERANCE_MS before the newest
 * event already appended may be missed by an endMs filter (the port's documented limit).
 */
import type postgres from 'postgres';
import type { ActivityFilter } from '../port/events.js';
import type { Db } from './client.js';

export const LATE_EVENT_TOLERANCE_MS = 5 * 60_000;
/** Candidates one page examines at most (~10-40 ms of primary-key probes), in growing stretches. */
export const PAGE_WALK = 10_000;
/** Candidates a count examines at most when each needs its row checked. */
export const COUNT_WALK = 50_000;
/** Candidates a count examines at most when the lead alone is the filter (an index-only count). */
export const COUNT_WALK_LEAD_ONLY = 200_000;

/** A piece of SQL with its bound parameters, for composing a statement. */
export type Fragment = postgres.PendingQuery<postgres.Row[]>;

/** The seqs the filter can match: [lo, hi), and the account's channels being purged (hidden). */
export interface Scope {
  lo: number;
  hi: number;
  /** Highest seq given out (bounds().last). */
  last: number;
  floor: number;
  hidden: string[];
}

/** Where a walk reads: seqs strictly between gt and lt, ascending or descending. */
export interface Window {
  gt: number;
  lt: number;
  desc: boolean;
}

/**
 * The log's bounds, the seq range of the filter's time bounds and the hidden channels, in one
 * statement (inside the reader's snapshot).
 */
export async function scopeOf(db: Db, f: ActivityFilter): Promise<Scope> {
  const endProbe = f.endMs === undefined ? null : f.endMs + LATE_EVENT_TOLERANCE_MS + 1;
  const [row] = await db<{ last: number; floor: number; start_seq: number | null; end_seq: number | null; hidden: string[] }[]>`
    SELECT h.last, f.floor,
      ${f.startMs === undefined ? db`NULL::int8` : db`(SELECT seq FROM event_clock WHERE clock_ms >= ${f.startMs} ORDER BY clock_ms LIMIT 1)`} AS start_seq,
      ${endProbe === null ? db`NULL::int8` : db`(SELECT seq FROM event_clock WHERE clock_ms >= ${endProbe} ORDER BY clock_ms LIMIT 1)`} AS end_seq,
      ARRAY(SELECT channel_id::text FROM channel_purges WHERE account_id = ${f.accountId}) AS hidden
    FROM event_log_head h, event_log_floor f`;
  const past = row.last + 1;
  const lo = Math.max(row.floor, f.startMs === undefined ? 1 : (row.start_seq ?? past));
  const hi = Math.min(past, endProbe === null ? past : (row.end_seq ?? past));
  return { lo, hi: Math.max(lo, hi), last: row.last, floor: row.floor, hidden: row.hidden };
}

type LeadKind = 'message' | 'queued' | 'recipient' | 'tags' | 'eventTypes' | 'channel' | 'mailType' | 'account';

/** The most selective indexed filter (the LMDB engine's stream order). */
export function leadOf(f: ActivityFilter): LeadKind {
  if (f.messageId) return 'message';
  if (f.messageStatus === 'queued') return 'queued';
  if (f.recipient) return 'recipient';
  if (f.tags?.length) return 'tags';
  if (f.eventTypes?.length) return 'eventTypes';
  if (f.channelId) return 'channel';
  if (f.mailType) return 'mailType';
  return 'account';
}

/** Whether a candidate needs its row checked: the filter says more than the lead. */
export function needsRow(f: ActivityFilter, scope: Scope): boolean {
  const lead = leadOf(f);
  const extra = [
    f.messageId && lead !== 'message',
    f.recipient && lead !== 'recipient',
    f.tags?.length && lead !== 'tags',
    f.eventTypes?.length && lead !== 'eventTypes' && lead !== 'queued',
    f.channelId && lead !== 'channel',
    f.mailType && lead !== 'mailType',
    f.subject,
    f.startMs !== undefined || f.endMs !== undefined,
    f.messageStatus === 'sent',
    // events_message is not keyed by account: the row tells whose the message is.
    lead === 'message',
    scope.hidden.length > 0,
  ];
  return extra.some(Boolean);
}

/** The lead's candidate seqs in the window, in walk order, at most `limit`: a subquery yielding `seq`. */
export function leadSeqs(db: Db, f: ActivityFilter, w: Window, limit: number): Fragment {
  const dir = w.desc ? db`DESC` : db`ASC`;
  const inWindow = (col: Fragment) => db`${col} > ${w.gt} AND ${col} < ${w.lt} ORDER BY ${col} ${dir} LIMIT ${limit}`;
  const a = f.accountId;
  // A comma list: the first `limit` of each value's ordered index range, merged and deduplicated
  // in seq order (each branch is bounded on its own, whichever plan PostgreSQL picks for it).
  const union = (values: readonly string[], one: (v: string) => Fragment) =>
    db`SELECT DISTINCT u.seq FROM (${[...new Set(values)].map((v) => db`(${one(v)})`).reduce((acc, q) => db`${acc} UNION ALL ${q}`)}) u
       ORDER BY u.seq ${dir} LIMIT ${limit}`;
  switch (leadOf(f)) {
    case 'message':
      return db`SELECT seq FROM events WHERE message_id = ${f.messageId!} AND ${inWindow(db`seq`)}`;
    case 'queued':
      return db`SELECT accepted_seq AS seq FROM message_queue WHERE account_id = ${a} AND ${inWindow(db`accepted_seq`)}`;
    case 'recipient':
      return db`SELECT seq FROM event_terms WHERE account_id = ${a} AND kind = 'r' AND value = ${f.recipient!.toLowerCase()} AND ${inWindow(db`seq`)}`;
    case 'tags':
      return union(f.tags!, (v) => db`SELECT seq FROM event_terms WHERE account_id = ${a} AND kind = 't' AND value = ${v} AND ${inWindow(db`seq`)}`);
    case 'eventTypes':
      return union(f.eventTypes!, (v) => db`SELECT seq FROM events WHERE account_id = ${a} AND event_type = ${v} AND ${inWindow(db`seq`)}`);
    case 'channel':
      return db`SELECT seq FROM events WHERE account_id = ${a} AND channel_id = ${f.channelId!} AND ${inWindow(db`seq`)}`;
    case 'mailType':
      return db`SELECT seq FROM events WHERE account_id = ${a} AND mail_type = ${f.mailType!} AND ${inWindow(db`seq`)}`;
    case 'account':
      return db`SELECT seq FROM events WHERE account_id = ${a} AND ${inWindow(db`seq`)}`;
  }
}

/** The whole filter on an events row `e` (the lead's own condition included: it costs nothing). */
export function residual(db: Db, f: ActivityFilter, scope: Scope): Fragment {
  const parts: Fragment[] = [db`e.account_id = ${f.accountId}`];
  if (f.messageId) parts.push(db`e.message_id = ${f.messageId}`);
  if (f.channelId) parts.push(db`e.channel_id = ${f.channelId}`);
  if (f.recipient) parts.push(db`e.recipients @> ARRAY[${f.recipient.toLowerCase()}::text]`);
  if (f.subject) parts.push(db`strpos(e.subject_lc, ${f.subject.toLowerCase()}) > 0`);
  if (f.tags?.length) parts.push(db`e.tags && ${[...new Set(f.tags)]}::text[]`);
  if (f.mailType) parts.push(db`e.mail_type = ${f.mailType}`);
  if (f.eventTypes?.length) parts.push(db`e.event_type = ANY(${[...new Set(f.eventTypes)]}::text[])`);
  if (f.startMs !== undefined) parts.push(db`e.ts_ms >= ${f.startMs}`);
  if (f.endMs !== undefined) parts.push(db`e.ts_ms <= ${f.endMs}`);
  const queued = db`EXISTS (SELECT 1 FROM message_queue q WHERE q.account_id = e.account_id AND q.accepted_seq = e.seq)`;
  if (f.messageStatus === 'queued') parts.push(queued);
  if (f.messageStatus === 'sent') parts.push(db`NOT ${queued}`);
  // Deleted channels whose events are still being purged: skipped from the delete on.
  if (scope.hidden.length > 0) parts.push(db`e.channel_id <> ALL(${scope.hidden}::text[])`);
  return parts.reduce((acc, p) => db`${acc} AND ${p}`);
}
