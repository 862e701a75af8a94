/**
 * What the store still holds of a deleted channel or of one of its broadcasts
 * (ChannelsPort.remains, broadcastRemains): counts over the other groups' tables by channel_id
 * (each indexed by it) or broadcast_id, for checks of the purge by tests and operators, never
 * for a request. Events and their terms count from the floor on: those below it are gone for
 * every reader (retention drops their partition later).
 */
import type { BroadcastRemains, ChannelRemains } from '../port/channels.js';
import type { PgContext } from './context.js';
import { seqAboveFloor } from './event-floor.js';

export async function channelRemains(ctx: PgContext, channelId: string): Promise<ChannelRemains> {
  const [row] = await ctx.sql<ChannelRemains[]>`
    SELECT
      (SELECT count(*) FROM messages WHERE channel_id = ${channelId})::int8 AS messages,
      (SELECT count(*) FROM message_bodies WHERE channel_id = ${channelId})::int8 AS bodies,
      ((SELECT count(*) FROM jobs WHERE channel_id = ${channelId})
        + (SELECT count(*) FROM finished_jobs WHERE channel_id = ${channelId}))::int8 AS jobs,
      (SELECT count(*) FROM events WHERE channel_id = ${channelId} AND ${seqAboveFloor(ctx.sql)})::int8 AS events,
      (SELECT count(*) FROM stat_counters WHERE channel_id = ${channelId})::int8
        + (SELECT count(*) FROM stat_rollup WHERE channel_id = ${channelId})::int8 AS stats,
      ((SELECT count(*) FROM event_terms WHERE channel_id = ${channelId} AND ${seqAboveFloor(ctx.sql)})
        + (SELECT count(*) FROM message_queue WHERE channel_id = ${channelId}))::int8 AS "indexEntries",
      (SELECT count(*) FROM inbound_messages WHERE channel_id = ${channelId})::int8 AS "inboundMessages",
      (SELECT count(*) FROM inbound_daily_counts WHERE channel_id = ${channelId})::int8 AS "inboundCounts"`;
  const { messages, bodies, jobs, events, stats, indexEntries, inboundMessages, inboundCounts } = row;
  return { messages, bodies, jobs, events, stats, indexEntries, inboundMessages, inboundCounts };
}

/**
 * `rows`: the broadcast's entries, failures, suppressions and messages, and the channel's
 * broadcasts other than this one's record (the LMDB engine's channel index entries: here the
 * broadcasts table is that index, so its rows of the channel count, this record apart).
 */
export async function broadcastRemains(ctx: PgContext, broadcastId: string, channelId: string): Promise<BroadcastRemains> {
  const [row] = await ctx.sql<{ rows: number; record: boolean; counters: boolean; statistics: boolean }[]>`
    SELECT
      ((SELECT count(*) FROM broadcast_entries WHERE broadcast_id = ${broadcastId})
        + (SELECT count(*) FROM broadcast_failures WHERE broadcast_id = ${broadcastId})
        + (SELECT count(*) FROM broadcast_suppressions WHERE broadcast_id = ${broadcastId})
        + (SELECT count(*) FROM messages WHERE broadcast_id = ${broadcastId})
        + (SELECT count(*) FROM broadcasts WHERE channel_id = ${channelId} AND id <> ${broadcastId}))::int8 AS rows,
      EXISTS (SELECT 1 FROM broadcasts WHERE id = ${broadcastId}) AS record,
      EXISTS (SELECT 1 FROM broadcast_counters WHERE broadcast_id = ${broadcastId}) AS counters,
      EXISTS (SELECT 1 FROM broadcast_statistics WHERE broadcast_id = ${broadcastId}) AS statistics`;
  return row;
}
