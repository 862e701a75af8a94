/**
 * What the store still holds of something that was removed: full scans that check the removals
 * of channel deletion (channel-purge.ts) and retention (retention.ts) from outside, by reading
 * every place the data could be left in. Each costs a walk over whole databases: for checks and
 * operators, never for a request.
 */
import { inboundRemains } from './inbound-purge.js';
import type { DeliveryJob, EventRecord, MessageRecord } from '../../domain/types.js';
import { dbsOf } from './databases.js';
import type { Store } from './env.js';
import { KEY_MAX } from './layout.js';
import type { BroadcastRemains, ChannelRemains } from '../port/channels.js';

export type { BroadcastRemains, ChannelRemains } from '../port/channels.js';

export function channelRemains(store: Store, channelId: string): ChannelRemains {
  const db = dbsOf(store);
  const messages = [...db.messages.getRange({})].filter((e) => (e.value as MessageRecord).channelId === channelId).map((e) => e.key as string);
  const ids = new Set(messages);
  const jobs = [...db.jobs.getRange({})].filter((e) => ids.has((e.value as DeliveryJob).messageId)).length;
  const events = [...db.events.getRange({})].filter((e) => (e.value as EventRecord).channelId === channelId).length;
  // Counter keys: [account, bucket, channel, ...] and, per tag, [account, bucket, tag, channel, ...].
  const stats = (['statsDaily', 'statsQuarter'] as const).reduce((n, name) => n + [...db[name].getKeys({})].filter((k) => (k as unknown[])[2] === channelId).length, 0);
  const tagStats = (['statsDailyTags', 'statsQuarterTags'] as const).reduce((n, name) => n + [...db[name].getKeys({})].filter((k) => (k as unknown[])[3] === channelId).length, 0);
  const bodies = messages.filter((id) => db.bodies.get(id) !== undefined).length;
  const indexEntries = [...db.eventIndex.getKeys({})].filter((k) => (k as unknown[])[1] === 'c' && (k as unknown[])[2] === channelId).length;
  const rollup = [...db.statsRollup.getKeys({})].filter((k) => (k as unknown[])[1] === channelId).length;
  return { messages: messages.length, bodies, jobs, events, stats: stats + tagStats + rollup, indexEntries, ...inboundRemains(store, channelId) };
}

export function broadcastRemains(store: Store, broadcastId: string, channelId: string): BroadcastRemains {
  const db = dbsOf(store);
  const id = broadcastId;
  const rows =
    (['broadcastEntries', 'broadcastFailures', 'broadcastSuppressions', 'broadcastMessages'] as const).reduce((n, name) => n + [...db[name].getKeys({ start: [id], end: [id, KEY_MAX] })].length, 0) +
    [...db.channelBroadcasts.getKeys({ start: [channelId], end: [channelId, KEY_MAX] })].length;
  return {
    rows,
    record: db.broadcasts.get(id) !== undefined,
    counters: db.broadcastStats.get(id) !== undefined,
    statistics: db.broadcastStatistics.get([id]) !== undefined,
  };
}

/** The seqs the event indexes (eventIndex, messageEvents) still name: none may be of a removed event. */
export function indexedEventSeqs(store: Store): { eventIndex: number[]; messageEvents: number[] } {
  return {
    eventIndex: [...dbsOf(store).eventIndex.getKeys({})].map((k) => (k as unknown[])[3] as number),
    messageEvents: [...dbsOf(store).messageEvents.getKeys({})].map((k) => (k as unknown[])[1] as number),
  };
}

/** Every [messageId, jobId] link of the messageJobs index. */
export function messageJobLinks(store: Store): [string, string][] {
  return [...dbsOf(store).messageJobs.getKeys({})] as [string, string][];
}
