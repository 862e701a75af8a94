/**
 * Importing the event log with its seqs (schema/events-stats.ts): each event's row and its
 * event_terms rows come from event-rows.ts, the functions appendEvents derives them with, so an
 * imported event reads exactly as one the engine appended. The statistics are NOT counted here
 * (they arrive as counter records, which outlive retention), nor are webhooks enqueued (the
 * outbox arrives as it was). The head (last seq, clock, floor) is written last, by writeEventLog.
 *
 * The range partitions the events go to are added before each batch (event-partitions.ts
 * coverSeqs), sized by the batch's own rate (its events per minute at least, as one day's
 * volume): a copied log would otherwise land in the DEFAULT partition, which retention can only
 * empty row by row and which every later ATTACH must scan.
 */
import type { EventRecord } from '../../../domain/types.js';
import type { TransferRecords } from '../../port/transfer.js';
import type { Tx } from '../client.js';
import { eventRows, termRows } from '../event-rows.js';
import { coverSeqs, dayWidth, PARTITION_SIZING } from '../event-partitions.js';

const MINUTE_MS = 60_000;

export async function writeEvents(tx: Tx, records: EventRecord[]): Promise<void> {
  const rows = eventRows(records.map(({ seq: _seq, ...draft }) => draft));
  rows.forEach((r, i) => {
    r.seq = records[i].seq;
    r.doc = records[i];
  });
  const terms = termRows(rows);
  if (rows.length === 0) return;
  const seqs = rows.map((r) => r.seq);
  const times = rows.map((r) => r.ts_ms);
  const width = dayWidth(rows.length, Math.max(...times) - Math.min(...times), PARTITION_SIZING, MINUTE_MS);
  await coverSeqs(tx, { from: Math.min(...seqs), to: Math.max(...seqs), width });
  await Promise.all([
    tx`INSERT INTO events (seq, account_id, channel_id, message_id, mail_type, event_type, ts_ms, subject_lc, recipients, tags, doc)
       SELECT * FROM jsonb_to_recordset(${tx.json(rows as never)}) AS x(seq int8, account_id text, channel_id text, message_id text,
         mail_type text, event_type text, ts_ms int8, subject_lc text, recipients text[], tags text[], doc jsonb)`,
    terms.seq.length === 0
      ? Promise.resolve()
      : tx`INSERT INTO event_terms (account_id, kind, value, seq, channel_id)
           SELECT a, k::"char", v, s, c FROM unnest(${terms.account}::text[], ${terms.kind}::text[], ${terms.value}::text[], ${terms.seq}::int8[], ${terms.channel}::text[]) AS u(a, k, v, s, c)`,
  ]);
}

export async function writeEventClock(tx: Tx, records: TransferRecords['eventClock'][]): Promise<void> {
  await tx`INSERT INTO event_clock (clock_ms, seq) SELECT * FROM unnest(${records.map((r) => r.clockMs)}::int8[], ${records.map((r) => r.seq)}::int8[])`;
}

export async function writeMessageQueue(tx: Tx, records: TransferRecords['messageQueue'][]): Promise<void> {
  await tx`
    INSERT INTO message_queue (account_id, accepted_seq, message_id, channel_id)
    SELECT * FROM unnest(${records.map((q) => q.accountId)}::text[], ${records.map((q) => q.acceptedSeq)}::int8[],
      ${records.map((q) => q.messageId)}::text[], ${records.map((q) => q.channelId)}::text[])`;
}

export async function writeMarks(tx: Tx, records: TransferRecords['engagementMarks'][]): Promise<void> {
  const rows = records.map((m) => ({ message_id: m.messageId, event_type: m.eventType, recipient: m.recipient, account_id: m.accountId, channel_id: m.channelId, at_ms: m.atMs }));
  await tx`INSERT INTO engagement_report_marks ${tx(rows, 'message_id', 'event_type', 'recipient', 'account_id', 'channel_id', 'at_ms')}`;
}

/**
 * The head: seqs go on from the copied log's last (a rolled-back append never leaves a hole), the
 * clock from its last value (clock_before_ms is the appender's own scratch value: the same), and
 * the floor where retention had got to.
 */
export async function writeEventLog(tx: Tx, records: TransferRecords['eventLog'][]): Promise<void> {
  for (const h of records) {
    await tx`UPDATE event_log_head SET last = ${h.lastSeq}, clock_ms = ${h.clockMs}, clock_before_ms = ${h.clockMs}`;
    await tx`UPDATE event_log_floor SET floor = ${h.floor}`;
  }
}
