/**
 * The delivery queue as the metrics see it (postrider_queue_*), read with the store's queue
 * port: three index counts and the first job of the due order, so a scrape costs the same with
 * ten jobs as with a million.
 */
import type { QueueSnapshot } from '../log/metrics.js';
import type { QueueCounts } from '../store/port/queue.js';
import type { DeliveryJob } from '../domain/types.js';
import type { StorePort } from '../store/port/index.js';

/** The snapshot through the store port (QueuePort.counts and the first queued job). */
export async function readQueueSnapshot(store: StorePort, nowMs: number): Promise<QueueSnapshot> {
  const [counts, first] = await Promise.all([store.queue.counts(nowMs), store.queue.list({ state: 'queued', limit: 1 })]);
  return snapshotOf(counts, first[0], nowMs);
}

function snapshotOf(counts: QueueCounts, first: DeliveryJob | undefined, nowMs: number): QueueSnapshot {
  // Queued jobs come in due order: the first one is the one waiting longest.
  const overdueMs = first ? Math.max(0, nowMs - Date.parse(first.dueAt)) : 0;
  return { queued: counts.queued, leased: counts.leased, dueNow: counts.dueNow, oldestDueAgeSeconds: overdueMs / 1000 };
}
