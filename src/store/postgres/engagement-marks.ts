/**
 * "At most one bounce report or complaint per message and recipient" (store/port/engagement.ts)
 * as a unique key: engagement_report_marks (message, event type, lower-cased recipient). The
 * verb inserts its marks with ON CONFLICT DO NOTHING before it records anything: of two reports
 * racing on any nodes, the second's INSERT waits for the first's row and then inserts nothing, so
 * it records nothing. (The LMDB engine reads the message's events inside its write lock instead.)
 *
 * A mark stands for its event: retention removes marks whose time is past the cutoff as it
 * removes the events (retention-sweep.ts), and the channel delete removes a channel's
 * (suppressions-tx.ts removeChannelSuppressions).
 */
import type { EventSubject } from '../../domain/event-subject.js';
import type { Tx } from './client.js';

/**
 * Marks the recipients for the message and type; resolves with the recipients that were not
 * marked yet, as given (distinct strings; two spellings of one new address both count, as the
 * LMDB engine's filter lets them), in order.
 */
export async function markReported(tx: Tx, s: EventSubject, type: 'bounced' | 'complained', recipients: readonly string[], atMs: number): Promise<string[]> {
  const distinct = [...new Set(recipients)];
  if (distinct.length === 0) return [];
  // Sorted: racing reports over overlapping recipients wait on each other in one order (no deadlock).
  const lower = [...new Set(distinct.map((r) => r.toLowerCase()))].sort();
  const rows = await tx<{ recipient: string }[]>`
    INSERT INTO engagement_report_marks (message_id, event_type, recipient, account_id, channel_id, at_ms)
    SELECT ${s.messageId}, ${type}, r, ${s.accountId}, ${s.channelId}, ${atMs}::int8 FROM unnest(${lower}::text[]) AS r
    ON CONFLICT DO NOTHING
    RETURNING recipient`;
  const fresh = new Set(rows.map((r) => r.recipient));
  return distinct.filter((r) => fresh.has(r.toLowerCase()));
}
