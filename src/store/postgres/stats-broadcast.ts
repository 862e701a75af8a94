/**
 * Per-broadcast statistics (store/port/broadcasts.ts BroadcastCounters.statistics): the same
 * counters under the same rule as the account's (stats-deltas.ts), for the events of broadcast
 * mail, attributed to the broadcast through the message record's broadcast_id (LMDB:
 * countForBroadcastInTxn). appendEvents adds them in its transaction, after the caller wrote its
 * message records (callers append last), so a broadcast batch's new messages are found.
 */
import { zeroCounters, type StatCounters } from '../../domain/stat-counters.js';
import type { Tx } from './client.js';
import type { CounterDelta } from './stats-deltas.js';

interface MessageCounts extends StatCounters {
  message_id: string;
}

/** The deltas of broadcast mail, summed per message. */
function perMessage(deltas: readonly CounterDelta[]): MessageCounts[] {
  const by = new Map<string, MessageCounts>();
  for (const { event, name, by: n } of deltas) {
    if (event.mailType !== 'broadcast') continue;
    let row = by.get(event.messageId);
    if (!row) by.set(event.messageId, (row = { message_id: event.messageId, ...zeroCounters() }));
    row[name] += n;
  }
  return [...by.values()];
}

/**
 * One upsert per append: the counts of the broadcasts' messages, summed per broadcast (a message
 * without a record or without a broadcast counts nowhere). Atomic per row (x = x + EXCLUDED.x);
 * rows come sorted by broadcast id, so two appenders never wait on each other in a cycle.
 */
export async function addBroadcastStatistics(tx: Tx, deltas: readonly CounterDelta[]): Promise<void> {
  const rows = perMessage(deltas);
  if (rows.length === 0) return;
  await tx`
    INSERT INTO broadcast_statistics (broadcast_id, account_id, channel_id, sent, delivered, opened, clicked, bounced, unsubscribed, complained)
    SELECT m.broadcast_id, min(m.account_id), min(m.channel_id), sum(x.sent), sum(x.delivered), sum(x.opened), sum(x.clicked),
      sum(x.bounced), sum(x.unsubscribed), sum(x.complained)
    FROM jsonb_to_recordset(${tx.json(rows as never)}) AS x(message_id text, sent int8, delivered int8, opened int8, clicked int8,
      bounced int8, unsubscribed int8, complained int8)
    JOIN messages m ON m.id = x.message_id
    WHERE m.broadcast_id IS NOT NULL
    GROUP BY m.broadcast_id
    ORDER BY m.broadcast_id
    ON CONFLICT (broadcast_id) DO UPDATE SET
      sent = broadcast_statistics.sent + EXCLUDED.sent,
      delivered = broadcast_statistics.delivered + EXCLUDED.delivered,
      opened = broadcast_statistics.opened + EXCLUDED.opened,
      clicked = broadcast_statistics.clicked + EXCLUDED.clicked,
      bounced = broadcast_statistics.bounced + EXCLUDED.bounced,
      unsubscribed = broadcast_statistics.unsubscribed + EXCLUDED.unsubscribed,
      complained = broadcast_statistics.complained + EXCLUDED.complained`;
}
