/**
 * Broadcasts: the accepted request is stored durably (record + one row per entry) before the API
 * answers; the expander then turns entries into messages in batches, moving a cursor in the same
 * transaction as each batch's messages, so a crash resumes exactly after the last committed batch.
 * Every entry ends as a message, or as a failure row (every recipient suppressed, a subject that
 * does not render, a composition that failed for good after the commit), or, after a cancel, as
 * never expanded; nothing is capped or kept only in memory.
 */
import type { MessageRecord } from '../../domain/types.js';
import {
  BroadcastCanceled,
  broadcastCompleted as completedWith,
  type BroadcastFailure,
  type BroadcastProgress,
  type BroadcastRecord,
  type BroadcastView,
  type CancelResult,
} from '../port/broadcasts.js';
import type { IdempotencyWrite } from '../port/idempotency.js';
import type { FailedEntry } from '../port/messages.js';
import { isChannelDeleted } from './channel-records.js';
import { dbsOf } from './databases.js';
import type { Store } from './env.js';
import { KEY_MAX } from './layout.js';
import { putIdempotencyInTxn } from './idempotency.js';
import { reserveSendQuotaInTxn } from './send-quota.js';
import { broadcastCounters, bumpBroadcastInTxn } from './broadcast-stats.js';
import { cancelUntouchedInTxn } from './message-schedule.js';
import { noteBroadcastMessagesInTxn } from './stats.js';

export { BroadcastCanceled };
export type { BroadcastFailure, BroadcastRecord, CancelResult };

export async function acceptBroadcast<C, E>(
  store: Store,
  input: {
    record: BroadcastRecord<C>;
    entries: E[];
    sendLimit?: { accountId: string; limit: number; recipients: number };
    idempotency?: IdempotencyWrite;
  },
): Promise<void> {
  await store.write(() => {
    if (input.sendLimit) reserveSendQuotaInTxn(store, input.sendLimit.accountId, input.sendLimit.recipients, input.sendLimit.limit);
    const createdMs = Date.parse(input.record.createdAt);
    dbsOf(store).broadcasts.put(input.record.id, input.record);
    input.entries.forEach((e, i) => dbsOf(store).broadcastEntries.put([input.record.id, i], e));
    dbsOf(store).broadcastQueue.put([createdMs, input.record.id], 1);
    dbsOf(store).channelBroadcasts.put([input.record.channelId, createdMs, input.record.id], 1);
    if (input.idempotency) putIdempotencyInTxn(store, input.idempotency.accountId, input.idempotency.key, input.idempotency.record);
  });
}

export function getBroadcast<C>(store: Store, id: string): BroadcastRecord<C> | undefined {
  return dbsOf(store).broadcasts.get(id) as BroadcastRecord<C> | undefined;
}

/** The oldest broadcast still being expanded. */
export function nextActiveBroadcast<C>(store: Store): BroadcastRecord<C> | undefined {
  for (const { key } of dbsOf(store).broadcastQueue.getRange({})) {
    const b = getBroadcast<C>(store, (key as [number, string])[1]);
    // A deleted channel's broadcast is not expanded any further; its purge removes it.
    if (!b || !isChannelDeleted(store, b.channelId)) return b;
  }
  return undefined;
}

export function broadcastEntries<E>(store: Store, id: string, from: number, count: number): { index: number; entry: E }[] {
  return [...dbsOf(store).broadcastEntries.getRange({ start: [id, from], end: [id, KEY_MAX], limit: count })].map(({ key, value }) => ({
    index: (key as [string, number])[1],
    entry: value as E,
  }));
}

/** A batch's progress (port BroadcastProgress) with what the commit knows of its messages. */
export interface BatchProgress extends Omit<BroadcastProgress, 'broadcastId'> {
  /** Ids of the messages committed in the same transaction. */
  messageIds: string[];
  /** Of those, how many are already finished (sandbox messages are `sent` at once). */
  finished: number;
}

/**
 * Inside a write: records a batch's progress on the record as it is now in the store (a cancel
 * may have come meanwhile: then the batch rolls back with BroadcastCanceled). Entries already
 * expanded are deleted to free space. A batch whose `from` is not the stored cursor rolls back
 * too: the expander may have more than one write in flight, and when the first one fails, the
 * next must not move the cursor past entries that never became messages.
 */
export function advanceBroadcastInTxn<C>(store: Store, id: string, p: BatchProgress): BroadcastRecord<C> {
  const b = getBroadcast<C>(store, id);
  // Its channel deleted (the tombstone committed before the DELETE's 204): nothing more is made of it.
  if (!b || b.canceledAt || isChannelDeleted(store, b.channelId)) throw new BroadcastCanceled(id);
  if (b.cursor !== p.from) throw new Error(`broadcast ${id}: a batch from entry ${p.from} came while the cursor is at ${b.cursor}`);
  for (let i = b.cursor; i < p.cursor; i++) dbsOf(store).broadcastEntries.remove([b.id, i]);
  for (const f of p.failures) dbsOf(store).broadcastFailures.put([b.id, f.index], f);
  let suppressed = b.suppressed ?? 0;
  for (const email of p.suppressed) {
    if (dbsOf(store).broadcastSuppressions.get([b.id, email]) !== undefined) continue;
    dbsOf(store).broadcastSuppressions.put([b.id, email], 1);
    suppressed++;
  }
  for (const messageId of p.messageIds) dbsOf(store).broadcastMessages.put([b.id, messageId], 1);
  noteBroadcastMessagesInTxn(store, b.id, p.messageIds);
  if (p.finished > 0) bumpBroadcastInTxn(store, b.id, { finished: p.finished });
  const next: BroadcastRecord<C> = {
    ...b,
    cursor: p.cursor,
    messages: b.messages + p.messageIds.length,
    skipped: b.skipped + p.skipped,
    failed: (b.failed ?? 0) + p.failures.length - p.skipped,
    suppressed,
    state: p.cursor >= b.total ? 'done' : 'expanding',
  };
  dbsOf(store).broadcasts.put(b.id, next);
  if (next.state === 'done') dbsOf(store).broadcastQueue.remove([Date.parse(b.createdAt), b.id]);
  return next;
}

/**
 * Inside the write that ends a broadcast's message whose composition failed for good after its
 * commit (store/signing.ts endUnfinished, from the finishing stage): its entry becomes a failure
 * row, as one that failed before the commit does, and counts as failed instead of as a message.
 * Ending the message counted it as finished (at the commit for a sandbox message, by closing its
 * jobs for a live one), which is taken back, so that completion counts each entry once (skipped
 * + failed + finished, broadcasts/service.ts) and the broadcast completes once its other
 * messages finished.
 */
export function failComposedEntryInTxn(store: Store, m: MessageRecord, f: FailedEntry): void {
  const b = m.broadcastId === undefined ? undefined : getBroadcast(store, m.broadcastId);
  if (!b) return;
  dbsOf(store).broadcastFailures.put([b.id, f.index], { index: f.index, to: m.to, cc: m.cc, bcc: m.bcc, code: f.code, message: f.message } satisfies BroadcastFailure);
  dbsOf(store).broadcasts.put(b.id, { ...b, messages: b.messages - 1, failed: (b.failed ?? 0) + 1 });
  bumpBroadcastInTxn(store, b.id, { finished: -1 });
}

/**
 * True once every entry is expanded and every message made has left the queue. Records written
 * before messages were counted per broadcast (no `failed` field) are completed once expanded.
 */
export function broadcastCompleted(store: Store, b: BroadcastRecord): boolean {
  if (b.state !== 'done' || b.canceledAt) return false;
  return completedWith(b, broadcastCounters(store, b.id));
}

/**
 * Once per data folder: broadcasts accepted before GET /broadcasts existed get their channel
 * index entry, so they are listed too. Returns how many were added.
 */
export async function backfillChannelBroadcasts(store: Store): Promise<number> {
  if (dbsOf(store).meta.get('channelBroadcastsIndexed')) return 0;
  return store.write(() => {
    let added = 0;
    for (const { value } of dbsOf(store).broadcasts.getRange()) {
      const b = value as BroadcastRecord;
      const key = [b.channelId, Date.parse(b.createdAt), b.id];
      if (dbsOf(store).channelBroadcasts.get(key) !== undefined) continue;
      dbsOf(store).channelBroadcasts.put(key, 1);
      added++;
    }
    dbsOf(store).meta.put('channelBroadcastsIndexed', true);
    return added;
  });
}

/**
 * Cancels a broadcast in one transaction: entries not yet expanded are deleted (never sent);
 * each message none of whose jobs was attempted or leased is canceled as a message's cancel
 * does it (message-schedule.ts: its jobs end done with canceledAt, the record is `canceled`,
 * one `canceled` event, no suppression), scheduled ones too, and counts as canceled. A job that
 * is leased is being delivered right now and finishes normally; so does a job already
 * attempted. The dispatcher leases in its own write transaction, so a job is either leased
 * before this runs (and left alone) or no longer due after it.
 */
export async function cancelBroadcast(store: Store, id: string, now: Date): Promise<CancelResult> {
  return store.write((): CancelResult => {
    const b = getBroadcast(store, id);
    if (!b) return { status: 'not_found' };
    if (b.canceledAt) return { status: 'canceled', record: b };
    if (broadcastCompleted(store, b)) return { status: 'completed' };
    for (let i = b.cursor; i < b.total; i++) dbsOf(store).broadcastEntries.remove([b.id, i]);
    dbsOf(store).broadcastQueue.remove([Date.parse(b.createdAt), b.id]);
    let canceled = 0;
    for (const key of dbsOf(store).broadcastMessages.getKeys({ start: [b.id], end: [b.id, KEY_MAX] })) {
      if (cancelUntouchedInTxn(store, (key as [string, string])[1], now).status === 'done') canceled++;
    }
    if (canceled > 0) bumpBroadcastInTxn(store, b.id, { canceled });
    const next: BroadcastRecord = { ...b, state: 'done', canceledAt: now.toISOString(), canceledEntries: b.total - b.cursor };
    dbsOf(store).broadcasts.put(b.id, next);
    return { status: 'canceled', record: next };
  });
}

/** A page of a channel's broadcasts, newest first, filtered by a predicate on the record and its counters. */
export function listChannelBroadcasts<C>(
  store: Store,
  q: { channelId: string; limit: number; offset: number; match: (b: BroadcastView<C>) => boolean },
): { totalCount: number; results: BroadcastView<C>[] } {
  const results: BroadcastView<C>[] = [];
  let totalCount = 0;
  const range = { start: [q.channelId, KEY_MAX], end: [q.channelId], reverse: true };
  for (const key of dbsOf(store).channelBroadcasts.getKeys(range)) {
    const record = getBroadcast<C>(store, (key as [string, number, string])[2]);
    if (!record) continue;
    const b: BroadcastView<C> = { record, counters: broadcastCounters(store, record.id) };
    if (!q.match(b)) continue;
    if (totalCount >= q.offset && results.length < q.limit) results.push(b);
    totalCount++;
  }
  return { totalCount, results };
}

export function broadcastFailures(store: Store, id: string, page: { limit: number; offset: number }): { totalCount: number; results: BroadcastFailure[] } {
  const range = { start: [id], end: [id, KEY_MAX] };
  return {
    // lmdb-js marks the options object it is given as a count query: each call gets its own.
    totalCount: dbsOf(store).broadcastFailures.getKeysCount({ ...range }),
    results: [...dbsOf(store).broadcastFailures.getRange({ ...range, limit: page.offset + page.limit })].slice(page.offset).map(({ value }) => value as BroadcastFailure),
  };
}

export function broadcastSuppressions(store: Store, id: string, page: { limit: number; offset: number }): { totalCount: number; results: string[] } {
  const range = { start: [id], end: [id, KEY_MAX] };
  return {
    // lmdb-js marks the options object it is given as a count query: each call gets its own.
    totalCount: dbsOf(store).broadcastSuppressions.getKeysCount({ ...range }),
    results: [...dbsOf(store).broadcastSuppressions.getKeys({ ...range, limit: page.offset + page.limit })].slice(page.offset).map((k) => (k as [string, string])[1]),
  };
}
