/**
 * Per-broadcast counters, kept as things happen so reading a broadcast never scans events or
 * messages: how many of its messages left the queue (finished, of which canceled), written in
 * the transactions that close jobs, expand and cancel; and its statistics, which store/stats.ts
 * counts with every other counter when an event is appended (same rules as /statistics).
 */
import type { BroadcastCounters } from '../port/broadcasts.js';
import { dbsOf } from './databases.js';
import type { Store } from './env.js';
import { zeroCounters, type StatCounters } from './stats.js';

export type { BroadcastCounters };

export function broadcastCounters(store: Store, broadcastId: string): BroadcastCounters {
  const c = dbsOf(store).broadcastStats.get(broadcastId) as Omit<BroadcastCounters, 'statistics'> | undefined;
  const statistics = { ...zeroCounters(), ...(dbsOf(store).broadcastStatistics.get([broadcastId]) as StatCounters | undefined) };
  return { finished: c?.finished ?? 0, canceled: c?.canceled ?? 0, statistics };
}

/** Inside a write: adds to the finished/canceled message counts. */
export function bumpBroadcastInTxn(store: Store, broadcastId: string, by: { finished?: number; canceled?: number }): void {
  const c = broadcastCounters(store, broadcastId);
  dbsOf(store).broadcastStats.put(broadcastId, { finished: c.finished + (by.finished ?? 0), canceled: c.canceled + (by.canceled ?? 0) });
}
