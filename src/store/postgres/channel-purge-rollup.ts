/**
 * A deleted channel's statistics rollup rows (stats-rollup.ts), purged in a batch of the channel
 * purge (channel-purge-batch.ts): removed, and taken off the account's '' rows of the same buckets
 * in the same transaction, so '' stays the sum of the channels that are left. The '' rows are
 * changed through the appenders' own upsert, in their key order, so a purge and an append that
 * both touch an account's rows lock them in the same order and never deadlock.
 */
import { COUNTER_NAMES } from '../../domain/stat-levels.js';
import type { Tx } from './client.js';
import { sortedRows, upsertRollup, type RollupRow } from './stats-rollup.js';

export async function deleteRollupSome(tx: Tx, channelId: string, limit: number): Promise<{ picked: number; removed: number }> {
  const gone = await tx<RollupRow[]>`
    DELETE FROM stat_rollup WHERE ctid = ANY(ARRAY(SELECT ctid FROM stat_rollup WHERE channel_id = ${channelId} LIMIT ${limit}))
    RETURNING account_id, channel_id, grain, bucket, mail_type, sent, delivered, opened, clicked, bounced, unsubscribed, complained`;
  const taken = new Map<string, RollupRow>();
  for (const g of gone) {
    const row = { ...g, channel_id: '' };
    for (const name of COUNTER_NAMES) row[name] = -g[name];
    taken.set(JSON.stringify([g.account_id, '', g.grain, g.bucket, g.mail_type]), row);
  }
  await upsertRollup(tx, sortedRows(taken));
  return { picked: gone.length, removed: gone.length };
}
