/**
 * The purge of a deleted channel's data (ChannelsPort.purgeBatch; spec 4.5: "removes the channel
 * permanently with all data tied to it"). The delete's commit (channels-write.ts) tombstoned the
 * channel, took its keys, suppressions, domain links and webhooks, and recorded the pending purge
 * in channel_purges; from then on no writer adds data of the channel (channels-tx.ts
 * lockLiveChannel). What is left goes here, table by table, in bounded batches.
 *
 * Every table of a channel's data has a channel_id column with an index (the shared brief's rule;
 * each group's schema/ file), so a batch is: for each table in PURGE_TABLES order, delete up to
 * what is left of the batch's budget by channel_id, one index range each. No cursor is kept: a
 * table already emptied costs one index probe, and the purge is done when one pass over every
 * table removed less than its budget (each table then had fewer rows than it was asked for).
 */
import type { Tx } from './client.js';
import type { PgContext } from './context.js';
import type { PurgeBatch } from '../port/channels.js';
import { deleteRollupSome } from './channel-purge-rollup.js';

/**
 * The tables of a channel's data, in the order they are emptied: the queue first, so the
 * queue's gauges and GET /queue drop the channel's jobs within moments of the 204 rather than
 * after the walk of its whole history (as the LMDB engine's 'jobs' phase); then broadcasts (the
 * record first: the expander stops), the event log and its indexes, the messages, and the
 * counters last. Constant names: no identifier is built from input.
 */
export const PURGE_TABLES = [
  'jobs',
  'finished_jobs',
  'message_queue',
  'unfinished_messages',
  'broadcasts',
  'broadcast_counters',
  'broadcast_statistics',
  'broadcast_entries',
  'broadcast_failures',
  'broadcast_suppressions',
  'event_terms',
  'events',
  'webhook_outbox',
  'engagement_report_marks',
  // Gone in the delete's commit already (removeChannelSuppressions); here for any a late
  // delivery outcome of the channel added after it.
  'suppressions',
  'retention_pending',
  'client_message_ids',
  'message_bodies',
  'messages',
  // Received messages of the channel's inbound routes (issue 33) and their day counts.
  'inbound_messages',
  'inbound_daily_counts',
  'stat_counters',
  // Each row taken off the account's '' row of its bucket (channel-purge-rollup.ts).
  'stat_rollup',
] as const;

/**
 * One transaction of at most `max` removals. The channel_purges row is locked (FOR UPDATE) for
 * the batch: two nodes' purgers take turns on one channel rather than racing over the same rows.
 * An unknown channel, a live one or a finished purge has no row: done at once, nothing removed.
 */
export async function purgeChannelBatch(ctx: PgContext, channelId: string, max: number): Promise<PurgeBatch> {
  const budget = Math.max(1, Math.floor(max));
  return ctx.begin(async (tx) => {
    const [pending] = await tx`SELECT 1 FROM channel_purges WHERE channel_id = ${channelId} FOR UPDATE`;
    if (!pending) return { removed: 0, done: true };
    let removed = 0;
    let work = 0;
    for (const table of PURGE_TABLES) {
      const step = await deleteSome(tx, table, channelId, budget - work);
      removed += step.removed;
      work += step.picked;
      if (work >= budget) return { removed, done: false };
    }
    await tx`DELETE FROM channel_purges WHERE channel_id = ${channelId}`;
    return { removed, done: true };
  });
}

/**
 * Up to `limit` of the table's rows of the channel: their ctids found through the channel_id
 * index, then deleted by a TID scan (= ANY(ARRAY(…)), which PostgreSQL plans as a TID scan,
 * where IN (subquery) may turn into a scan of the whole table). `picked` says whether the table
 * may hold more (it found `limit`): a row updated meanwhile (a new ctid) is not deleted by this
 * step but is found by the next, so exhaustion is judged by what was found, not deleted.
 * A ctid is unique within one table only: in a partitioned one (events, event_terms) the same
 * ctid names a row in each partition, so a row is deleted only where its (tableoid, ctid) pair
 * was picked (else another channel's row at the same place in another partition would go).
 */
async function deleteSome(tx: Tx, table: (typeof PURGE_TABLES)[number], channelId: string, limit: number): Promise<{ picked: number; removed: number }> {
  if (table === 'stat_rollup') return deleteRollupSome(tx, channelId, limit);
  const [row] = await tx<{ picked: number; removed: number }[]>`
    WITH picked AS MATERIALIZED (SELECT tableoid, ctid FROM ${tx(table)} WHERE channel_id = ${channelId} LIMIT ${limit}),
    gone AS (DELETE FROM ${tx(table)} WHERE ctid = ANY(ARRAY(SELECT ctid FROM picked))
      AND (tableoid, ctid) IN (SELECT tableoid, ctid FROM picked) RETURNING 1)
    SELECT (SELECT count(*) FROM picked)::int8 AS picked, (SELECT count(*) FROM gone)::int8 AS removed`;
  return row;
}
