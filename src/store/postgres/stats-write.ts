/**
 * Writing the statistics counters inside appendEvents' transaction: the records one append
 * touches (stats-deltas.ts) in ONE multi-row upsert. `x = x + EXCLUDED.x` is atomic per row
 * under any concurrency (the conflicting row is locked and re-read), so no count is lost even
 * without the event log's head lock, which serializes appenders anyway.
 */
import type { Tx } from './client.js';
import type { CounterRow } from './stats-deltas.js';

export async function upsertCounters(tx: Tx, rows: readonly CounterRow[]): Promise<void> {
  if (rows.length === 0) return;
  // One parameter whatever the number of rows (no 65,535-parameter limit on a big batch).
  await tx`
    INSERT INTO stat_counters (account_id, grain, tag, bucket, channel_id, mail_type, tag_set,
      sent, delivered, opened, clicked, bounced, unsubscribed, complained)
    SELECT account_id, grain, tag, bucket, channel_id, mail_type, tag_set,
      sent, delivered, opened, clicked, bounced, unsubscribed, complained
    FROM jsonb_to_recordset(${tx.json(rows as never)}) AS x(account_id text, grain "char", tag text, bucket int8,
      channel_id text, mail_type text, tag_set text[], sent int8, delivered int8, opened int8, clicked int8,
      bounced int8, unsubscribed int8, complained int8)
    ON CONFLICT (account_id, grain, tag, bucket, channel_id, mail_type, tag_set) DO UPDATE SET
      sent = stat_counters.sent + EXCLUDED.sent,
      delivered = stat_counters.delivered + EXCLUDED.delivered,
      opened = stat_counters.opened + EXCLUDED.opened,
      clicked = stat_counters.clicked + EXCLUDED.clicked,
      bounced = stat_counters.bounced + EXCLUDED.bounced,
      unsubscribed = stat_counters.unsubscribed + EXCLUDED.unsubscribed,
      complained = stat_counters.complained + EXCLUDED.complained`;
}
