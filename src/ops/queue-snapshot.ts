/**
 * The delivery queue as the metrics see it (postrider_queue_*), read with the store's queue
 * verbs: three index counts and the first key of the due index, so a scrape costs the same with
 * ten jobs as with a million.
 */
import type { QueueSnapshot } from '../log/metrics.js';
import type { LmdbStore } from '../store/lmdb/engine.js';
import { dueMs, listJobs, queueCounts } from '../store/lmdb/queue.js';

export function queueSnapshot(store: LmdbStore, nowMs: number): QueueSnapshot {
  const counts = queueCounts(store, nowMs);
  // Queued jobs come in due order: the first one is the one waiting longest.
  const [first] = listJobs(store, { state: 'queued', limit: 1 });
  const overdueMs = first ? Math.max(0, nowMs - dueMs(first)) : 0;
  return { queued: counts.queued, leased: counts.leased, dueNow: counts.dueNow, oldestDueAgeSeconds: overdueMs / 1000 };
}
