/**
 * The finishing stage's reads (MessagesPort): the backlog of waiting messages (unfinished_messages,
 * the LMDB engine's `unsigned`), paged by id, counted, its oldest entry by the age index, and what
 * to finish for one message.
 */
import type { FinishingTries, UnfinishedMessage } from '../port/messages.js';
import type { Db } from './client.js';

export async function unfinishedAfter(db: Db, after: string | undefined, limit: number): Promise<string[]> {
  const rows = await db<{ message_id: string }[]>`
    SELECT message_id FROM unfinished_messages ${after === undefined ? db`` : db`WHERE message_id > ${after}`}
    ORDER BY message_id LIMIT ${limit}`;
  return rows.map((r) => r.message_id);
}

/** The backlog's size: small unless the finishing stage falls behind, so a count is cheap. */
export async function unfinishedCount(db: Db): Promise<number> {
  const [row] = await db<{ n: number }[]>`SELECT count(*)::int8 AS n FROM unfinished_messages`;
  return row?.n ?? 0;
}

/** One index probe: the first row of (committed_ms, message_id). */
export async function oldestUnfinishedMs(db: Db, nowMs: number): Promise<number> {
  const [row] = await db<{ committed_ms: number }[]>`SELECT committed_ms FROM unfinished_messages ORDER BY committed_ms, message_id LIMIT 1`;
  return row ? Math.max(0, nowMs - row.committed_ms) : 0;
}

export async function isUnfinished(db: Db, id: string): Promise<boolean> {
  const rows = await db`SELECT 1 FROM unfinished_messages WHERE message_id = ${id}`;
  return rows.length > 0;
}

interface WaitingRow {
  account_id: string;
  committed_ms: number;
  domain: string | null;
  compose: Buffer | null;
  failures: FinishingTries | null;
  body: Buffer | null;
  channel_id: string | null;
  /** The channel's tombstone is committed (read in the same statement: no second round trip). */
  channel_deleted: boolean;
}

/**
 * What to finish: the entry and, for an SMTP submission (no request to compose), the committed
 * body; undefined when the message no longer waits. `gone`: the message went (channel purge,
 * retention) or its channel was deleted before it was finished (nothing is composed or signed for
 * it from the DELETE's 204 on).
 */
export async function unfinishedMessage(db: Db, id: string): Promise<UnfinishedMessage | undefined> {
  const [row] = await db<WaitingRow[]>`
    SELECT u.account_id, u.committed_ms, u.domain, u.compose, u.failures, m.channel_id,
      CASE WHEN u.compose IS NULL THEN (SELECT body FROM message_bodies WHERE message_id = u.message_id) END AS body,
      EXISTS (SELECT 1 FROM channels c WHERE c.id = m.channel_id AND c.deleted_at_ms IS NOT NULL) AS channel_deleted
    FROM unfinished_messages u LEFT JOIN messages m ON m.id = u.message_id
    WHERE u.message_id = ${id}`;
  if (!row) return undefined;
  const compose: unknown = row.compose === null ? undefined : JSON.parse(row.compose.toString('utf8'));
  const body = row.body ?? undefined;
  const gone = row.channel_id === null || row.channel_deleted || (compose === undefined && body === undefined);
  return {
    accountId: row.account_id,
    ...(row.domain !== null && { domain: row.domain }),
    ...(compose !== undefined && { compose }),
    ...(row.failures !== null && { failures: row.failures }),
    committedMs: row.committed_ms,
    body,
    gone,
  };
}
