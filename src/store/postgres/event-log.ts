/**
 * The event log's writers, for every group's transactions (shared brief: the events group's
 * one *-tx file). appendEvents is THE function that writes events: it gives seqs, writes the
 * events and their index rows (event_terms, event_clock), counts the statistics counters (the
 * account's and the broadcasts') and hands the records to the webhook outbox
 * (webhooks-tx.ts), all in the caller's transaction.
 *
 * ## Seqs commit in order (the port's `after` cursor guarantee, store/port/events.ts)
 *
 * Seqs come from the one row of event_log_head: `UPDATE ... SET last = last + n RETURNING last`.
 * The UPDATE's row lock is held until the caller's transaction ends, so a second appender waits
 * at that statement until the first has committed (or rolled back) and then, under READ
 * COMMITTED, re-reads the row and continues from the committed `last`. PostgreSQL makes a
 * committed transaction visible to new snapshots before it releases its locks, so by the time
 * appender 2 holds the lock, appender 1's events are visible to every later snapshot. Hence every
 * snapshot sees a prefix [floor, last] of the log: a reader can never see seq n while a lower seq
 * can still commit. A rolled-back appender's row version is discarded, so its seqs are given out
 * again: no holes except those retention and the channel purge make.
 *
 * The cost: appenders are serialized from their appendEvents to their COMMIT. Callers therefore
 * call appendEvents as LATE as possible in their transaction (after their other writes), and
 * everything here is batched (a fixed number of statements whatever the number of events).
 */
import type { EventRecord } from '../../domain/types.js';
import type { Tx } from './client.js';
import { eventRows, termRows, clockRaises, type EventDraft } from './event-rows.js';
import { seqAboveFloor } from './event-floor.js';
import { counterDeltas, counterRows, countedOf, pastQuarterChanges, type CountedEvent } from './stats-deltas.js';
import { noteStatChanges } from './stats-changes.js';
import { addBroadcastStatistics } from './stats-broadcast.js';
import { rollupRows, upsertRollup } from './stats-rollup.js';
import { upsertCounters } from './stats-write.js';
import { enqueueWebhookEvents } from './webhooks-tx.js';

export type { EventDraft };
/** Retention's removal of the oldest events (event-retention.ts). */
export { removeOldEvents, type RemovedEvents } from './event-retention.js';

/**
 * Appends the drafts in order inside `tx`; returns them with their seqs. Call it after the
 * transaction's other writes: from here to COMMIT every other appender waits.
 */
export async function appendEvents(tx: Tx, drafts: readonly EventDraft[]): Promise<EventRecord[]> {
  if (drafts.length === 0) return [];
  const rows = eventRows(drafts);
  const maxMs = rows.reduce((m, r) => Math.max(m, r.ts_ms), -Infinity);
  // The lock every appender takes (see the header); the clock moves in the same statement.
  const [head] = await tx<{ last: number; clock_before_ms: number | null }[]>`
    UPDATE event_log_head
    SET last = last + ${drafts.length}, clock_before_ms = clock_ms, clock_ms = greatest(coalesce(clock_ms, ${maxMs}), ${maxMs})
    RETURNING last, clock_before_ms`;
  const first = head.last - drafts.length + 1;
  rows.forEach((r, i) => {
    r.seq = first + i;
    r.doc = { seq: r.seq, ...drafts[i] };
  });
  const records = rows.map((r) => r.doc);
  const appended = records.map((record, i) => ({ record, counted: countedOf(record, rows[i].ts_ms) }));
  const earlier = await earlierOutcomes(tx, appended.filter((a) => a.record.eventType === 'bounced').map((a) => a.record.messageId));
  const deltas = counterDeltas(appended, earlier);
  const terms = termRows(rows);
  const raises = clockRaises(rows, head.clock_before_ms);
  // Sent together: postgres.js pipelines the statements of one transaction.
  await Promise.all([
    tx`INSERT INTO events (seq, account_id, channel_id, message_id, mail_type, event_type, ts_ms, subject_lc, recipients, tags, doc)
       SELECT seq, account_id, channel_id, message_id, mail_type, event_type, ts_ms, subject_lc, recipients, tags, doc
       FROM jsonb_to_recordset(${tx.json(rows as never)}) AS x(seq int8, account_id text, channel_id text, message_id text,
         mail_type text, event_type text, ts_ms int8, subject_lc text, recipients text[], tags text[], doc jsonb)`,
    terms.seq.length === 0
      ? Promise.resolve()
      : tx`INSERT INTO event_terms (account_id, kind, value, seq, channel_id)
           SELECT a, k::"char", v, s, c FROM unnest(${terms.account}::text[], ${terms.kind}::text[], ${terms.value}::text[], ${terms.seq}::int8[], ${terms.channel}::text[]) AS u(a, k, v, s, c)`,
    raises.length === 0
      ? Promise.resolve()
      : tx`INSERT INTO event_clock (clock_ms, seq) SELECT * FROM unnest(${raises.map((r) => r.ms)}::int8[], ${raises.map((r) => r.seq)}::int8[])`,
    upsertCounters(tx, counterRows(deltas)),
    upsertRollup(tx, rollupRows(deltas)),
    noteStatChanges(tx, pastQuarterChanges(deltas, Date.now())),
    addBroadcastStatistics(tx, deltas),
    // Webhooks: the outbox entries commit with the events (store/port/webhooks.ts).
    enqueueWebhookEvents(tx, records),
  ]);
  return records;
}

/**
 * The delivered and bounced events already in the log of the messages that get a bounce now,
 * in seq order (the bounce-after-delivery rule). Read under the head lock: every earlier
 * appender has committed, so this statement's snapshot holds all of them. Those below the floor
 * are gone for this rule as for every reader (retention leaves them in their partition).
 */
async function earlierOutcomes(tx: Tx, messageIds: string[]): Promise<Map<string, CountedEvent[]>> {
  const out = new Map<string, CountedEvent[]>();
  if (messageIds.length === 0) return out;
  const rows = await tx<{ doc: EventRecord; ts_ms: number }[]>`
    SELECT doc, ts_ms FROM events
    WHERE message_id = ANY(${[...new Set(messageIds)]}::text[]) AND event_type IN ('delivered', 'bounced')
      AND ${seqAboveFloor(tx)}
    ORDER BY message_id, seq`;
  for (const { doc, ts_ms } of rows) {
    const list = out.get(doc.messageId) ?? [];
    list.push(countedOf(doc, ts_ms));
    out.set(doc.messageId, list);
  }
  return out;
}

/**
 * Inside the transaction that commits live messages, with their accepted events: the messages
 * are queued (the message list's status=queued) until dequeueMessages.
 */
export async function queueMessages(tx: Tx, accepted: readonly EventRecord[]): Promise<void> {
  if (accepted.length === 0) return;
  await tx`
    INSERT INTO message_queue (account_id, accepted_seq, message_id, channel_id)
    SELECT * FROM unnest(${accepted.map((e) => e.accountId)}::text[], ${accepted.map((e) => e.seq)}::int8[],
      ${accepted.map((e) => e.messageId)}::text[], ${accepted.map((e) => e.channelId)}::text[])
    ON CONFLICT DO NOTHING`;
}

/** Inside the transaction where these messages' last delivery jobs finished: they are `sent` now. */
export async function dequeueMessages(tx: Tx, messageIds: readonly string[]): Promise<void> {
  if (messageIds.length === 0) return;
  await tx`DELETE FROM message_queue WHERE message_id = ANY(${messageIds as string[]}::text[])`;
}
