/** The reading verbs of the PostgreSQL engine's channels (store/port/channels.ts). */
import type { Channel } from '../../domain/types.js';
import type { ChannelFilter, StoredChannel } from '../port/channels.js';
import type { PgContext } from './context.js';

/**
 * The account's live channels matching the filter, oldest first (created_at_ms, then id in
 * code-unit order), one page and the total, in one statement over the account's live index.
 */
export async function listChannels(ctx: PgContext, f: ChannelFilter): Promise<{ results: Channel[]; totalCount: number }> {
  const { sql } = ctx;
  // Both lower-cased by JavaScript (name_lc), as the LMDB engine compares them.
  const needle = f.name?.toLowerCase();
  const [row] = await sql<{ total: number; results: Channel[] }[]>`
    WITH m AS (
      SELECT doc, created_at_ms, id FROM channels
      WHERE account_id = ${f.accountId} AND deleted_at_ms IS NULL
        ${f.ids ? sql`AND id = ANY(${f.ids}::text[])` : sql``}
        ${needle ? sql`AND strpos(name_lc, ${needle}) > 0` : sql``}
        ${f.deliveryType ? sql`AND delivery_type = ${f.deliveryType}` : sql``}
    )
    SELECT (SELECT count(*) FROM m)::int8 AS total,
      coalesce((SELECT jsonb_agg(p.doc ORDER BY p.created_at_ms, p.id)
        FROM (SELECT doc, created_at_ms, id FROM m ORDER BY created_at_ms, id LIMIT ${f.limit} OFFSET ${f.offset}) p), '[]'::jsonb) AS results`;
  return { results: row.results, totalCount: row.total };
}

export async function getChannelRecord(ctx: PgContext, id: string): Promise<StoredChannel | undefined> {
  const [row] = await ctx.sql<{ doc: StoredChannel }[]>`SELECT doc FROM channels WHERE id = ${id}`;
  return row?.doc;
}

export async function getLiveChannel(ctx: PgContext, id: string): Promise<Channel | undefined> {
  const [row] = await ctx.sql<{ doc: Channel }[]>`SELECT doc FROM channels WHERE id = ${id} AND deleted_at_ms IS NULL`;
  return row?.doc;
}

/** One statement, so one snapshot: the ids among `ids` whose tombstone is committed. */
export async function deletedAmong(ctx: PgContext, ids: Iterable<string>): Promise<ReadonlySet<string>> {
  const distinct = [...new Set(ids)];
  if (distinct.length === 0) return new Set();
  const rows = await ctx.sql<{ id: string }[]>`
    SELECT id FROM channels WHERE id = ANY(${distinct}::text[]) AND deleted_at_ms IS NOT NULL`;
  return new Set(rows.map((r) => r.id));
}

export async function pendingPurges(ctx: PgContext): Promise<string[]> {
  const rows = await ctx.sql<{ channel_id: string }[]>`SELECT channel_id FROM channel_purges ORDER BY channel_id`;
  return rows.map((r) => r.channel_id);
}
