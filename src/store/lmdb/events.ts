/**
 * The append-only event log. appendEventInTxn is the one function that writes events, so every
 * index over events (eventIndex, messageEvents, eventClock) and the statistics counters are
 * maintained in the same transaction as the event itself; removeEventInTxn (retention) is its
 * mirror image.
 *
 * Sequence numbers: `seq` comes from meta 'eventSeq' inside the write transaction (read once
 * per write and written once at its end, see eventLogMeta), so the committed seqs always form
 * one contiguous run [eventFloor, eventSeq] (a rolled-back
 * transaction gives its numbers back; retention removes from the low end only). A reader's
 * snapshot is therefore prefix-closed, which is what makes `after` paging gap-free.
 *
 * The event clock: meta 'eventClockMs' is the largest timestamp appended so far; whenever an
 * event raises it, [clockMs, seq] goes into `eventClock`. "The first seq whose clock reaches T"
 * is then one seek, which turns startDate/endDate into a seq range (store/activity-query.ts).
 */
import type { EventRecord } from '../../domain/types.js';
import { dbsOf } from './databases.js';
import type { Store } from './env.js';
import { eventTimeMs, indexKeysOf } from './event-index.js';
import { KEY_MAX } from './layout.js';
import { countEventInTxn } from './stats.js';
import { enqueueWebhookEventsInTxn } from './webhook-outbox.js';

/**
 * The meta values every append moves. They are read once and written once per group commit
 * (store/write-scope.ts): a broadcast batch appends 400 events in one write.
 */
interface EventLogMeta {
  seq: number;
  clockMs: number | undefined;
}

const EVENT_LOG = 'eventLog';

function readEventLogMeta(store: Store): EventLogMeta {
  const meta = dbsOf(store).meta;
  return { seq: (meta.get('eventSeq') as number | undefined) ?? 0, clockMs: meta.get('eventClockMs') as number | undefined };
}

function writeEventLogMeta(store: Store, was: EventLogMeta, now: EventLogMeta): void {
  const meta = dbsOf(store).meta;
  if (now.seq !== was.seq) meta.put('eventSeq', now.seq);
  if (now.clockMs !== was.clockMs) meta.put('eventClockMs', now.clockMs);
}

/**
 * This write's event log meta: read at its first event, written once at the end of its group
 * commit (write-scope.ts). A write inside a group carries on from the seq its group reached.
 */
function eventLogMeta(store: Store): EventLogMeta {
  const part = store.requireWriteScope().part<{ was: EventLogMeta; log: EventLogMeta }>(EVENT_LOG, {
    init: (above) => {
      const was = above ? above.was : readEventLogMeta(store);
      return { was, log: { ...(above ? above.log : was) } };
    },
    flush: (p) => writeEventLogMeta(store, p.was, p.log),
    merge: (into, from) => Object.assign(into.log, from.log),
  });
  return part.log;
}

/** Must run inside Store.write(). Returns the event with its sequence number. */
export function appendEventInTxn(store: Store, event: Omit<EventRecord, 'seq'>): EventRecord {
  const db = dbsOf(store);
  const timeMs = eventTimeMs(event);
  const log = eventLogMeta(store);
  const seq = ++log.seq;
  const record: EventRecord = { seq, ...event };
  db.events.put(seq, record);
  db.messageEvents.put([event.messageId, seq], timeMs);
  for (const key of indexKeysOf(record)) db.eventIndex.put(key, timeMs);
  if (log.clockMs === undefined || timeMs > log.clockMs) {
    log.clockMs = timeMs;
    db.eventClock.put([timeMs, seq], 1);
  }
  countEventInTxn(store, record, timeMs);
  // Webhooks: the outbox entries commit with the event (store/webhook-outbox.ts).
  enqueueWebhookEventsInTxn(store, record);
  return record;
}

/**
 * Inside a write: removes one event and its index entries (not its statistics: counters
 * outlive events). Only retention calls this, always on the lowest seqs.
 */
export function removeEventInTxn(store: Store, e: EventRecord): void {
  const db = dbsOf(store);
  db.events.remove(e.seq);
  db.messageEvents.remove([e.messageId, e.seq]);
  for (const key of indexKeysOf(e)) db.eventIndex.remove(key);
  // A message parked by retention while still queued leaves the message list with its event.
  if (e.eventType === 'accepted') db.messageQueue.remove([e.accountId, e.seq]);
}

/** The last seq given out (0: none yet). */
export function lastEventSeq(store: Store): number {
  // Inside a write that appended events, the deferred value is the current one.
  const deferred = store.writeScope?.peek<{ log: EventLogMeta }>(EVENT_LOG);
  return deferred ? deferred.log.seq : ((dbsOf(store).meta.get('eventSeq') as number | undefined) ?? 0);
}

/** The lowest seq retention has not removed. */
export function eventFloor(store: Store): number {
  return (dbsOf(store).meta.get('eventFloor') as number | undefined) ?? 1;
}

export function getEvent(store: Store, seq: number): EventRecord | undefined {
  return dbsOf(store).events.get(seq) as EventRecord | undefined;
}

export function eventsOfMessage(store: Store, messageId: string): EventRecord[] {
  const out: EventRecord[] = [];
  for (const { key } of dbsOf(store).messageEvents.getRange({ start: [messageId], end: [messageId, KEY_MAX] })) {
    const e = dbsOf(store).events.get((key as [string, number])[1]) as EventRecord | undefined;
    if (e) out.push(e);
  }
  return out;
}

/** The account owning a message's events (for access checks once the message record is gone). */
export function accountOfMessageEvents(store: Store, messageId: string): { accountId: string; channelId: string } | undefined {
  for (const { key } of dbsOf(store).messageEvents.getRange({ start: [messageId], end: [messageId, KEY_MAX], limit: 1 })) {
    const e = getEvent(store, (key as [string, number])[1]);
    if (e) return { accountId: e.accountId, channelId: e.channelId };
  }
  return undefined;
}

/**
 * The first seq whose event clock is at least `ms` (every earlier event has a timestamp < ms);
 * lastEventSeq + 1 when the clock has not reached it yet.
 */
export function firstSeqAtClock(store: Store, ms: number): number {
  for (const { key } of dbsOf(store).eventClock.getRange({ start: [ms], limit: 1 })) return (key as [number, number])[1];
  return lastEventSeq(store) + 1;
}
