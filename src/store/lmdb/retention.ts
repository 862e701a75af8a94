/**
 * Retention (config `retention.days`): events, and the messages they describe, older than the
 * cutoff leave the store in small transactions (the sweeper in src/retention/ paces them).
 *
 * Events go from the low end of the log only (seq order is time order, up to late events), so
 * the kept events stay one contiguous run [eventFloor, eventSeq] and `after` paging keeps
 * working while the sweep runs. Each removed event takes its index entries with it. Statistics
 * counters stay.
 *
 * A message goes with its `accepted` event: its raw body (`bodies`), its record (`messages`),
 * its finished delivery jobs and their `messageJobs` entries. Nothing of a message that is not
 * finished goes (domain/retention-hold.ts): the walk stops at the accepted event of one with an
 * open job (scheduled, queued, retrying) or waiting to be composed or signed, or finished less
 * than retention.days ago, and the floor waits there until it may pass. Its later events
 * (delivered, opened...) age out on their own. `retentionPending` holds the messages an older
 * version parked (their events went while they were delivered): removed once they are done.
 *
 * Received messages (issue 33) received before the cutoff go in the same write, up to `batch`,
 * once posted or failed (inbound-messages.ts, expireInboundInTxn).
 */
import { holdsRetention } from '../../domain/retention-hold.js';
import type { DeliveryJob, MessageRecord } from '../../domain/types.js';
import { forgetClientMessageIdInTxn } from './client-message-ids.js';
import { dbsOf } from './databases.js';
import type { Store } from './env.js';
import { eventTimeMs } from './event-index.js';
import { eventFloor, getEvent, lastEventSeq, removeEventInTxn } from './events.js';
import { expireInboundInTxn } from './inbound-messages.js';
import { KEY_MAX } from './layout.js';
import { awaitsSignature } from './signing.js';
import type { SweepBatchOptions, SweepResult } from '../port/retention.js';

export type { SweepResult } from '../port/retention.js';

/** One transaction: removes up to `batch` events older than cutoffMs, with their messages. */
export async function sweepRetentionBatch(store: Store, opts: SweepBatchOptions): Promise<SweepResult> {
  return store.write(() => {
    const result: SweepResult = { events: 0, messages: 0, inboundMessages: 0, more: false };
    const last = lastEventSeq(store);
    let floor = eventFloor(store);
    for (; floor <= last; floor++) {
      if (result.events >= opts.batch) {
        result.more = true;
        break;
      }
      const e = getEvent(store, floor);
      if (!e) continue;
      if (eventTimeMs(e) >= opts.cutoffMs) break;
      if (e.eventType === 'accepted' && isHeldInTxn(store, e.messageId, opts, eventTimeMs(e))) {
        result.heldBy = e.messageId;
        break;
      }
      removeEventInTxn(store, e);
      result.events++;
      if (e.eventType === 'accepted') result.messages += expireMessageInTxn(store, e.messageId);
    }
    if (floor !== eventFloor(store)) {
      dbsOf(store).meta.put('eventFloor', floor);
      trimClockInTxn(store, floor);
    }
    result.messages += retryPendingInTxn(store, opts.batch);
    result.inboundMessages = expireInboundInTxn(store, opts.cutoffMs, opts.batch);
    if (result.inboundMessages >= opts.batch) result.more = true;
    return result;
  });
}

/**
 * Removes event clock entries below the floor, except the last of them: it still holds the
 * clock value of the floor's event (events.ts, firstSeqAtClock).
 */
function trimClockInTxn(store: Store, floor: number): void {
  const below: unknown[] = [];
  for (const { key } of dbsOf(store).eventClock.getRange({})) {
    if ((key as [number, number])[1] > floor) break;
    below.push(key);
  }
  for (const key of below.slice(0, -1)) dbsOf(store).eventClock.remove(key);
}

/** The message of this accepted event is not finished, or finished after the cutoff: its events stay. */
function isHeldInTxn(store: Store, messageId: string, opts: SweepBatchOptions, acceptedMs: number): boolean {
  const m = dbsOf(store).messages.get(messageId) as MessageRecord | undefined;
  const accepted = { atMs: acceptedMs, holdFromMs: opts.holdFromMs ?? Number.NEGATIVE_INFINITY };
  return m !== undefined && holdsRetention(m, awaitsSignature(store, messageId), opts.cutoffMs, accepted);
}

/** Returns 1 when the message was removed, 0 when it is gone already or parked (never here: isHeldInTxn stopped the walk before it). */
function expireMessageInTxn(store: Store, messageId: string): number {
  const m = dbsOf(store).messages.get(messageId) as MessageRecord | undefined;
  if (!m) return 0;
  if (m.openJobs > 0) {
    dbsOf(store).retentionPending.put(messageId, Date.parse(m.createdAt));
    return 0;
  }
  purgeMessageInTxn(store, messageId);
  return 1;
}

/** Inside a write: a finished message leaves the store (record, body, done jobs, index links). */
export function purgeMessageInTxn(store: Store, messageId: string): void {
  forgetClientMessageIdInTxn(store, messageId);
  dbsOf(store).bodies.remove(messageId);
  dbsOf(store).messages.remove(messageId);
  dbsOf(store).retentionPending.remove(messageId);
  const jobKeys = [...dbsOf(store).messageJobs.getKeys({ start: [messageId], end: [messageId, KEY_MAX] })] as [string, string][];
  for (const key of jobKeys) {
    const job = dbsOf(store).jobs.get(key[1]) as DeliveryJob | undefined;
    if (job?.state === 'done') dbsOf(store).jobs.remove(key[1]);
    dbsOf(store).messageJobs.remove(key);
  }
}

/** The message waits in `retentionPending` for its delivery to finish. */
export function isRetentionPending(store: Store, messageId: string): boolean {
  return dbsOf(store).retentionPending.get(messageId) !== undefined;
}

/** Parked messages whose delivery has finished since. */
function retryPendingInTxn(store: Store, max: number): number {
  let n = 0;
  const ids = [...dbsOf(store).retentionPending.getKeys({ limit: max })] as string[];
  for (const id of ids) {
    const m = dbsOf(store).messages.get(id) as MessageRecord | undefined;
    if (!m) dbsOf(store).retentionPending.remove(id);
    else if (m.openJobs === 0) {
      purgeMessageInTxn(store, id);
      n++;
    }
  }
  return n;
}
