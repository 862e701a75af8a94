/**
 * The append-only event log. appendEventInTxn is the one function that writes events, so every
 * index over events (added by the activity and statistics code) is maintained in the same
 * transaction as the event itself.
 */
import type { EventRecord } from '../domain/types.js';
import type { Store } from './env.js';
import { KEY_MAX } from './layout.js';

/** Must run inside Store.write(). Returns the event with its sequence number. */
export function appendEventInTxn(store: Store, event: Omit<EventRecord, 'seq'>): EventRecord {
  const seq = ((store.db.meta.get('eventSeq') as number | undefined) ?? 0) + 1;
  store.db.meta.put('eventSeq', seq);
  const record: EventRecord = { seq, ...event };
  store.db.events.put(seq, record);
  store.db.messageEvents.put([event.messageId, seq], 1);
  return record;
}

export function eventsOfMessage(store: Store, messageId: string): EventRecord[] {
  const out: EventRecord[] = [];
  for (const { key } of store.db.messageEvents.getRange({ start: [messageId], end: [messageId, KEY_MAX] })) {
    const e = store.db.events.get((key as [string, number])[1]) as EventRecord | undefined;
    if (e) out.push(e);
  }
  return out;
}
