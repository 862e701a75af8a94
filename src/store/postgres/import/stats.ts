/**
 * Importing the statistics counters as they were (schema/events-stats.ts stat_counters), through
 * the engine's own upsert (stats-write.ts): into an empty table it inserts, and the source's keys
 * are unique, so no batch touches a row twice. The rollup is made from them (rollupOf).
 */
import type { TransferStatCounter } from '../../port/transfer.js';
import type { Tx } from '../client.js';
import type { CounterRow } from '../stats-deltas.js';
import { addToRollupRows, sortedRows, upsertRollup, type RollupRow } from '../stats-rollup.js';
import { QUARTERS_IN } from '../../../domain/stat-levels.js';
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
  await upsertRollup(tx, rollupOf(records));
}

/**
 * The rollup (stats-rollup.ts) is rebuilt from the untagged counters as migrations 4 and 7 fill it:
 * quarter hours, hours and six hours from the quarter-hour records, days from the day records. Upserts add,
 * so a rollup row fed by records of several batches sums them all.
 */
function rollupOf(records: TransferStatCounter[]): RollupRow[] {
  const rows = new Map<string, RollupRow>();
  for (const s of records) {
    if (s.tag !== '') continue;
    const quarter = s.grain === 'q' ? s.bucket : s.bucket * QUARTERS_IN.d;
    addToRollupRows(rows, { accountId: s.accountId, channelId: s.channelId, mailType: s.mailType, quarter }, s.counters, s.grain === 'q' ? ['q', 'h', 's'] : ['d']);
  }
  return sortedRows(rows);
}
