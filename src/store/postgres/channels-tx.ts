/**
 * What other groups of the PostgreSQL engine do with channels inside their own transaction
 * (shared brief: one file per owner, each function takes the transaction first).
 *
 * The deletion rule (store/port/channels.ts): from the commit of ChannelsPort.delete on, nothing
 * more is done on the channel's behalf. A writer that adds data of a channel calls
 * lockLiveChannel first in its transaction: the delete's conditional UPDATE of the channel row
 * and this row lock exclude each other, so either the writer commits first (and the purge
 * removes what it wrote) or it sees the tombstone and writes nothing.
 */
import type { Db, Tx } from './client.js';
import type { StoredChannel } from '../port/channels.js';
import { noteStatChanges } from './stats-changes.js';

/**
 * The live channel, its row locked until the transaction ends, or undefined when it is unknown
 * or deleted. 'share' (FOR SHARE, the default) for writers that add the channel's data: many may
 * hold it at once, and a delete waits for them (and they for a delete in progress, then see its
 * tombstone: READ COMMITTED re-reads the row after the wait). 'update' (FOR UPDATE) for a writer
 * that must exclude the other writers too.
 */
export async function lockLiveChannel(tx: Tx, channelId: string, mode: 'share' | 'update' = 'share'): Promise<StoredChannel | undefined> {
  const rows =
    mode === 'update'
      ? await tx<{ doc: StoredChannel }[]>`SELECT doc FROM channels WHERE id = ${channelId} AND deleted_at_ms IS NULL FOR UPDATE`
      : await tx<{ doc: StoredChannel }[]>`SELECT doc FROM channels WHERE id = ${channelId} AND deleted_at_ms IS NULL FOR SHARE`;
  return rows[0]?.doc;
}

/**
 * lockLiveChannel for many channels at once (FOR SHARE, in id order so that two such
 * transactions never deadlock): the ids among `channelIds` that are live channels, locked.
 * With `accountId`, only the account's channels count as live.
 */
export async function lockLiveChannels(tx: Tx, channelIds: readonly string[], accountId?: string): Promise<Set<string>> {
  if (channelIds.length === 0) return new Set();
  const rows = await tx<{ id: string }[]>`
    SELECT id FROM channels
    WHERE id = ANY(${[...channelIds]}::text[]) AND deleted_at_ms IS NULL
      ${accountId === undefined ? tx`` : tx`AND account_id = ${accountId}`}
    ORDER BY id
    FOR SHARE`;
  return new Set(rows.map((r) => r.id));
}

/** Whether the channel's tombstone is committed (false for an unknown id). One index probe. */
export async function isChannelDeleted(db: Db, channelId: string): Promise<boolean> {
  const rows = await db`SELECT 1 FROM channels WHERE id = ${channelId} AND deleted_at_ms IS NOT NULL`;
  return rows.length > 0;
}

/**
 * Inside the delete's transaction: the channel's data (messages, events, broadcasts, counters)
 * is to be purged in the background (ChannelsPort.purgeBatch). Idempotent.
 */
export async function schedulePurge(tx: Tx, p: { channelId: string; accountId: string; deletedAtMs: number }): Promise<void> {
  await tx`
    INSERT INTO channel_purges (channel_id, account_id, deleted_at_ms)
    VALUES (${p.channelId}, ${p.accountId}, ${p.deletedAtMs})
    ON CONFLICT (channel_id) DO NOTHING`;
  // Its counters stop counting in every bucket at once (domain/stat-changes.ts).
  await noteStatChanges(tx, new Map([[p.accountId, 0]]));
}

/**
 * The account's deleted channels whose data may still be in the store (their purge is pending):
 * account-wide reads skip them. Empty (one index probe) unless a deletion is under way.
 */
export async function purgingChannelsOf(db: Db, accountId: string): Promise<Set<string>> {
  const rows = await db<{ channel_id: string }[]>`SELECT channel_id FROM channel_purges WHERE account_id = ${accountId}`;
  return new Set(rows.map((r) => r.channel_id));
}

/**
 * The NOTIFY channel on which a channel's deletion is announced to the other nodes (payload: the
 * channel id), so that their ctx.deletedChannels (QueuePort.channelDeleted, answered in the same
 * turn) learn it; named per schema like domain/wake-channel.ts. Sent inside the delete's
 * transaction: PostgreSQL delivers it only if and when that commits.
 */
export function channelDeletedTopic(schema: string): string {
  return `${schema}_channel_deleted`.slice(0, 63);
}

/** Every deleted channel's id (the tombstones): what a node's ctx.deletedChannels starts from. */
export async function loadDeletedChannels(db: Db): Promise<string[]> {
  const rows = await db<{ id: string }[]>`SELECT id FROM channels WHERE deleted_at_ms IS NOT NULL`;
  return rows.map((r) => r.id);
}
