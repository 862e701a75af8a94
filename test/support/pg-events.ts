/**
 * The PostgreSQL engine's event log, for the engine fixtures (support/engine-fixtures.ts):
 * seeding it through the engine's one real writer (appendEvents, which keeps the term and clock
 * rows, the statistics counters and the webhook outbox as a real append does), reading it whole,
 * and listing the index rows that still name removed events.
 */
import type { EventRecord } from '../../src/domain/types.js';
import { pgContextOf, type PostgresStore } from '../../src/store/postgres/engine.js';
import { appendEvents, queueMessages } from '../../src/store/postgres/event-log.js';

/**
 * Appends the drafts in order, in transactions of at most `batch` (default 200); returns them as
 * stored. `queued`: the accepted events among them stand for messages still waiting for delivery.
 */
export async function pgSeedEvents(store: PostgresStore, drafts: readonly Omit<EventRecord, 'seq'>[], o: { batch?: number; queued?: boolean } = {}): Promise<EventRecord[]> {
  const ctx = pgContextOf(store);
  const batch = o.batch ?? 200;
  const out: EventRecord[] = [];
  for (let i = 0; i < drafts.length; i += batch) {
    const chunk = drafts.slice(i, i + batch);
    const stored = await ctx.begin(async (tx) => {
      const records = await appendEvents(tx, chunk);
      if (o.queued) await queueMessages(tx, records.filter((e) => e.eventType === 'accepted'));
      return records;
    });
    out.push(...stored);
  }
  return out;
}

/**
 * Every stored event, in seq order, from the log itself: from the floor on, as every reader of
 * the engine (retention leaves the rows below it in their partition until it drops the partition).
 */
export async function pgEventLog(store: PostgresStore): Promise<EventRecord[]> {
  const rows = await pgContextOf(store).sql<{ doc: EventRecord }[]>`
    SELECT doc FROM events WHERE seq >= (SELECT floor FROM event_log_floor) ORDER BY seq`;
  return rows.map((r) => r.doc);
}

/** The index rows (event_terms from the floor on, as events, and message_queue) that still name one of `seqs`. */
export async function pgDanglingIndexEntries(store: PostgresStore, seqs: Iterable<number>): Promise<string[]> {
  const list = [...seqs];
  if (list.length === 0) return [];
  const sql = pgContextOf(store).sql;
  const terms = await sql<{ seq: number }[]>`
    SELECT seq FROM event_terms WHERE seq = ANY(${list}::int8[]) AND seq >= (SELECT floor FROM event_log_floor) ORDER BY seq`;
  const queue = await sql<{ seq: number }[]>`SELECT accepted_seq AS seq FROM message_queue WHERE accepted_seq = ANY(${list}::int8[]) ORDER BY accepted_seq`;
  return [...terms.map((r) => `event_terms: ${r.seq}`), ...queue.map((r) => `message_queue: ${r.seq}`)];
}
