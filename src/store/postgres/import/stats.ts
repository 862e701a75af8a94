/**
 * Importing the statistics counters as they were (schema/events-stats.ts stat_counters), through
 * the engine's own upsert (stats-write.ts): into an empty table it inserts, and the source's keys
 * are unique, so no batch touches a row twice.
 */
import type { TransferStatCounter } from '../../port/transfer.js';
import type { Tx } from '../client.js';
import type { CounterRow } from '../stats-deltas.js';
import { upsertCounters } from '../stats-write.js';

export async function writeStatCounters(tx: Tx, records: TransferStatCounter[]): Promise<void> {
  const rows: CounterRow[] = records.map((s) => ({
    account_id: s.accountId,
    grain: s.grain,
    tag: s.tag,
    bucket: s.bucket,
    channel_id: s.channelId,
    mail_type: s.mailType,
    tag_set: s.tagSet,
    ...s.counters,
  }));
  await upsertCounters(tx, rows);
}
