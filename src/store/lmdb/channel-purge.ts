/**
 * Channel deletion (spec 4.5: "removes the channel permanently with all data tied to it").
 *
 * DELETE /channels/{id} tombstones the channel and writes a `channelPurges` entry in the same
 * transaction (store/channels.ts), so from that commit on every read refuses or skips the
 * channel (accessibleChannel / channelInScope 404, hiddenChannels below for account-wide reads). The
 * data goes afterwards in bounded batches (purgeChannelBatch, paced by channels/purger.ts), each
 * one transaction, resuming from the entry's phase after a restart:
 *
 *   jobs      the delivery jobs of the channel's queued messages, found through the account's
 *             message queue (messageQueue), so the queue stops counting them however long the
 *             channel's history is (nothing of the channel is sent from the 204 on anyway: the
 *             dispatcher reads the tombstone, delivery/dispatcher.ts)
 *   broadcasts  the channel's broadcasts (channelBroadcasts) with their entries, failures,
 *             suppressions, message lists, queue entries and counters
 *   events    the channel's events through its own eventIndex prefix [accountId, 'c', channelId],
 *             each with its index entries, and with every message it names: record, body,
 *             delivery jobs (any left), outbox entries
 *   inbound   the channel's received messages (issue 33) with their raw bytes, walked through the
 *             account's list in inboundMessageIndex, then their day counts (inbound-purge.ts)
 *   stats     the channel's counters in statsDaily, statsDailyTags, statsQuarter, statsQuarterTags
 *             (keyed by account first: walked by the account's range, from a saved cursor), then
 *             its rollup records, each taken off the account's record (stats-rollup.ts)
 *
 * The tombstone stays (domains list the channel as `deleted: true`); the entry goes when done.
 */
import type { DeliveryJob, EventRecord, MessageRecord } from '../../domain/types.js';
import type { OutboxEntry, Webhook } from '../../domain/webhook.js';
import { forgetClientMessageIdInTxn } from './client-message-ids.js';
import { dbsOf } from './databases.js';
import type { Store } from './env.js';
import { indexPrefix } from './event-index.js';
import { getEvent, removeEventInTxn } from './events.js';
import { purgeInboundInTxn } from './inbound-purge.js';
import { KEY_MAX } from './layout.js';
import { jobsOfMessage } from './message-jobs.js';
import { pageAfter, sameKeyParts } from './page-after.js';
import { type ChannelPurge, type StatsDb } from './purge-queue.js';
import { removeJobInTxn } from './queue.js';
import { purgeRollupInTxn } from './stats-rollup.js';

const STATS_DBS = ['statsDaily', 'statsDailyTags', 'statsQuarter', 'statsQuarterTags'] as const satisfies readonly StatsDb[];
/**
 * In this order: the queued jobs first, so the queue's gauges and GET /queue drop them within
 * moments of the 204 rather than after the walk of the channel's whole history; then broadcasts.
 * A purge recorded before the jobs phase existed resumes where it was (events remove jobs too).
 */
const PHASES: readonly ChannelPurge['phase'][] = ['jobs', 'broadcasts', 'events', 'inbound', 'inboundCounts', ...STATS_DBS, 'statsRollup'];
/** A broadcast's rows in these databases are keyed [broadcastId, ...]. */
const BROADCAST_ROW_DBS = ['broadcastEntries', 'broadcastFailures', 'broadcastSuppressions', 'broadcastMessages'] as const;

/** One transaction of at most `batch` removals. Returns whether more is left for this channel. */
export async function purgeChannelBatch(store: Store, channelId: string, batch: number): Promise<{ removed: number; done: boolean }> {
  return store.write(() => {
    const p = dbsOf(store).channelPurges.get(channelId) as ChannelPurge | undefined;
    if (!p) return { removed: 0, done: true };
    let removed = 0;
    let phase = p.phase;
    let cursor = p.cursor;
    while (removed < batch) {
      const left = batch - removed;
      const step = stepInTxn(store, p, phase, cursor, left);
      removed += step.removed;
      if (!step.finished) {
        cursor = step.cursor;
        break;
      }
      const next = PHASES.indexOf(phase) + 1;
      if (next >= PHASES.length) {
        dbsOf(store).channelPurges.remove(channelId);
        return { removed, done: true };
      }
      phase = PHASES[next];
      cursor = undefined;
    }
    dbsOf(store).channelPurges.put(channelId, { ...p, phase, cursor } satisfies ChannelPurge);
    return { removed, done: false };
  });
}

interface Step {
  removed: number;
  finished: boolean;
  cursor?: unknown[];
}

function stepInTxn(store: Store, p: ChannelPurge, phase: ChannelPurge['phase'], cursor: unknown[] | undefined, max: number): Step {
  if (phase === 'jobs') return purgeJobsInTxn(store, p, cursor, max);
  if (phase === 'broadcasts') return purgeBroadcastsInTxn(store, p, max);
  if (phase === 'events') return purgeEventsInTxn(store, p, max);
  if (phase === 'inbound' || phase === 'inboundCounts') return purgeInboundInTxn(store, p, phase, cursor, max);
  if (phase === 'statsRollup') return purgeRollupInTxn(store, p, max);
  return purgeStatsInTxn(store, p, phase, cursor, max);
}

/**
 * The account's queued messages ([accountId, acceptedSeq] in messageQueue) after the cursor, `max`
 * looked at per step: each one's accepted event says its channel, and the channel's lose their
 * jobs (any state: a leased one's attempt then records nothing, its lease gone). The records stay
 * for the events phase.
 */
function purgeJobsInTxn(store: Store, p: ChannelPurge, cursor: unknown[] | undefined, max: number): Step {
  const after = (cursor?.[1] as number | undefined) ?? 0;
  let seen = 0;
  let removed = 0;
  let last: unknown[] | undefined;
  for (const key of [...dbsOf(store).messageQueue.getKeys({ start: [p.accountId, after + 1], end: [p.accountId, KEY_MAX], limit: max })] as [string, number][]) {
    seen++;
    last = key;
    const accepted = getEvent(store, key[1]);
    if (accepted?.channelId !== p.channelId) continue;
    for (const job of jobsOfMessage(store, accepted.messageId)) {
      removeJobInTxn(store, job);
      removed++;
    }
  }
  // Counted as work by messages looked at (a message has a job per recipient domain, at most 50).
  return { removed: Math.max(seen, removed), finished: seen < max, cursor: last ?? cursor };
}

/**
 * The channel's broadcasts through its own index (channelBroadcasts [channelId, createdAtMs,
 * broadcastId]). The record goes first (with its queue entry and counters): the expander then
 * stops, since a batch whose record is gone rolls back (broadcasts.ts advanceBroadcastInTxn).
 * Then its rows, at most `max` per step; the index key last, once nothing is left.
 */
function purgeBroadcastsInTxn(store: Store, p: ChannelPurge, max: number): Step {
  const db = dbsOf(store);
  let removed = 0;
  for (const key of [...db.channelBroadcasts.getKeys({ start: [p.channelId], end: [p.channelId, KEY_MAX], limit: max })] as [string, number, string][]) {
    const [, createdMs, id] = key;
    if (db.broadcasts.get(id) !== undefined) {
      db.broadcasts.remove(id);
      db.broadcastQueue.remove([createdMs, id]);
      db.broadcastStats.remove(id);
      db.broadcastStatistics.remove([id]);
      removed += 4;
    }
    for (const name of BROADCAST_ROW_DBS) {
      if (removed >= max) return { removed, finished: false };
      for (const k of [...db[name].getKeys({ start: [id], end: [id, KEY_MAX], limit: max - removed })]) {
        db[name].remove(k);
        removed++;
      }
    }
    if (removed >= max) return { removed, finished: false };
    db.channelBroadcasts.remove(key);
    removed++;
  }
  return { removed, finished: removed < max };
}

/** The channel's events, oldest first, and the messages they name. */
function purgeEventsInTxn(store: Store, p: ChannelPurge, max: number): Step {
  const prefix = indexPrefix(p.accountId, 'c', p.channelId);
  const keys = [...dbsOf(store).eventIndex.getKeys({ start: prefix, end: [...prefix, KEY_MAX], limit: max })] as [string, string, string, number][];
  for (const key of keys) {
    const e = getEvent(store, key[3]);
    if (!e) {
      dbsOf(store).eventIndex.remove(key); // an entry without its event: nothing else to remove
      continue;
    }
    removeEventInTxn(store, e);
    purgeMessageInTxn(store, e);
  }
  return { removed: keys.length, finished: keys.length < max };
}

/** A message of the deleted channel: record, body, jobs (any state) and waiting webhook payloads. */
function purgeMessageInTxn(store: Store, e: EventRecord): void {
  const db = dbsOf(store);
  const m = db.messages.get(e.messageId) as MessageRecord | undefined;
  if (m && m.channelId !== e.channelId) return;
  if (m) forgetClientMessageIdInTxn(store, m);
  db.messages.remove(e.messageId);
  db.bodies.remove(e.messageId);
  db.retentionPending.remove(e.messageId);
  for (const key of [...db.messageJobs.getKeys({ start: [e.messageId], end: [e.messageId, KEY_MAX] })] as [string, string][]) {
    const job = db.jobs.get(key[1]) as DeliveryJob | undefined;
    if (job) removeJobInTxn(store, job);
    db.messageJobs.remove(key);
  }
  // Webhooks of the whole account (channelId null) may still hold this message's payloads.
  for (const { key } of db.accountWebhooks.getRange({ start: [e.accountId], end: [e.accountId, KEY_MAX] })) {
    const w = db.webhooks.get((key as [string, number, string])[2]) as Webhook | undefined;
    if (!w || w.channelId !== null) continue;
    for (const { key: k, value } of [...db.webhookOutbox.getRange({ start: [w.id, e.messageId], end: [w.id, e.messageId, KEY_MAX] })]) {
      const o = value as OutboxEntry;
      db.webhookOutbox.remove(k);
      // Its due entry, if it is the head of the message (webhook-outbox.ts dueKey).
      db.webhookDue.remove(o.part === undefined ? [o.webhookId, o.dueAtMs, o.messageId, o.seq] : [o.webhookId, o.dueAtMs, o.messageId, o.seq, o.part]);
    }
  }
}

/**
 * A statistics database, walked over the account's range from the saved cursor: `max` keys
 * looked at per step, those of the channel removed. The channel id is the third element in
 * statsDaily/statsQuarter [accountId, bucket, channelId, ...] and the fourth in the tag
 * databases [accountId, tag, bucket, channelId, ...].
 */
function purgeStatsInTxn(store: Store, p: ChannelPurge, db: StatsDb, cursor: unknown[] | undefined, max: number): Step {
  const at = db === 'statsDaily' || db === 'statsQuarter' ? 2 : 3;
  const range = (r: { start?: unknown[]; limit: number }) => dbsOf(store)[db].getKeys({ start: (r.start ?? [p.accountId]) as string[], end: [p.accountId, KEY_MAX], limit: r.limit }) as Iterable<unknown[]>;
  const keys = pageAfter(cursor, max, range, (k) => k, sameKeyParts);
  let removed = 0;
  for (const k of keys) {
    if (k[at] !== p.channelId) continue;
    dbsOf(store)[db].remove(k);
    removed++;
  }
  // Counted as work by keys looked at, so a step is bounded however few belong to the channel.
  return { removed: Math.max(keys.length, removed), finished: keys.length < max, cursor: keys[keys.length - 1] };
}
