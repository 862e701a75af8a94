/**
 * The LMDB engine's event log, for the engine fixtures (support/engine-fixtures.ts): seeding it
 * for tests that need a history no real send makes (many synthetic events, old timestamps, late
 * events, a bounce after a delivery), and reading it whole. Events are appended by the engine's
 * own verbs only (a commit, an outcome: store/port/events.ts has no append verb), so this is
 * engine-specific: it writes through the one real writer, appendEventInTxn, in the engine's
 * write, which maintains the indexes and statistics counters as a real append does.
 */
import type { EventRecord } from '../../src/domain/types.js';
import type { LmdbStore } from '../../src/store/lmdb/engine.js';
import { appendEventInTxn, eventFloor, getEvent, lastEventSeq } from '../../src/store/lmdb/events.js';
import { queueMessageInTxn } from '../../src/store/lmdb/message-query.js';

/**
 * Appends the drafts in order, in writes of at most `batch` (default 200); returns them as stored
 * (with seqs). `queued`: the accepted events among them stand for messages still waiting for
 * delivery.
 */
export async function appendEvents(store: LmdbStore, drafts: readonly Omit<EventRecord, 'seq'>[], o: { batch?: number; queued?: boolean } = {}): Promise<EventRecord[]> {
  const batch = o.batch ?? 200;
  const out: EventRecord[] = [];
  for (let i = 0; i < drafts.length; i += batch) {
    const chunk = drafts.slice(i, i + batch);
    const stored = await store.write(() =>
      chunk.map((d) => {
        const e = appendEventInTxn(store, d);
        if (o.queued && e.eventType === 'accepted') queueMessageInTxn(store, e);
        return e;
      }),
    );
    out.push(...stored);
  }
  return out;
}

/** Every stored event, in seq order, read from the log directly. */
export function eventLog(store: LmdbStore): EventRecord[] {
  const out: EventRecord[] = [];
  // The log is one run [eventFloor, lastEventSeq]; a deleted channel's events leave holes in it.
  for (let seq = eventFloor(store); seq <= lastEventSeq(store); seq++) {
    const e = getEvent(store, seq);
    if (e) out.push(e);
  }
  return out;
}
