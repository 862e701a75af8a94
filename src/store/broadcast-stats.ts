/**
 * Per-broadcast counters, kept as things happen so reading a broadcast never scans events or
 * messages: how many of its messages left the queue (finished, of which canceled), and its
 * statistics (the counters of store/stats.ts, attributed through the message record's
 * broadcastId). Written inside the transactions that append events, close jobs, expand and
 * cancel, so they always agree with what those transactions wrote.
 */
import type { EventRecord } from '../domain/types.js';
import type { Store } from './env.js';
import { counterOf, zeroCounters, type StatCounters } from './stats.js';

export interface BroadcastCounters {
  /** Messages of the broadcast no longer queued (sent, bounced, expired, dropped or canceled). */
  finished: number;
  /** Messages taken out of the queue by a cancel before any delivery attempt. */
  canceled: number;
  statistics: StatCounters;
}

export function broadcastCounters(store: Store, broadcastId: string): BroadcastCounters {
  const c = store.db.broadcastStats.get(broadcastId) as BroadcastCounters | undefined;
  return c ?? { finished: 0, canceled: 0, statistics: zeroCounters() };
}

/** Inside a write: adds to the finished/canceled message counts. */
export function bumpBroadcastInTxn(store: Store, broadcastId: string, by: { finished?: number; canceled?: number }): void {
  const c = broadcastCounters(store, broadcastId);
  store.db.broadcastStats.put(broadcastId, { ...c, finished: c.finished + (by.finished ?? 0), canceled: c.canceled + (by.canceled ?? 0) });
}

/**
 * Inside a write, with the event being appended (events.ts): counts a broadcast message's event
 * for its broadcast. The message record is written before its first event (same transaction).
 */
export function countBroadcastEventInTxn(store: Store, e: EventRecord): void {
  if (e.mailType !== 'broadcast') return;
  const counter = counterOf(e);
  if (!counter) return;
  const m = store.db.messages.get(e.messageId) as { broadcastId?: string } | undefined;
  if (!m?.broadcastId) return; // /send/broadcast/message and SMTP broadcast mail belong to no broadcast
  const c = broadcastCounters(store, m.broadcastId);
  store.db.broadcastStats.put(m.broadcastId, { ...c, statistics: { ...c.statistics, [counter.name]: c.statistics[counter.name] + counter.by } });
}
