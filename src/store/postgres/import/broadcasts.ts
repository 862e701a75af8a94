/**
 * Importing broadcasts (schema/messages-broadcasts.ts): the record with its state column, its
 * counters row (every broadcast has one, as broadcast-accept.ts writes it), its statistics when
 * any event was counted (stats-broadcast.ts), and the rows of its entries, failures and
 * suppressed recipients.
 */
import type { TransferRecords } from '../../port/transfer.js';
import type { Tx } from '../client.js';

export async function writeBroadcasts(tx: Tx, records: TransferRecords['broadcasts'][]): Promise<void> {
  const rows = records.map(({ record: b, finished, canceled }) => ({
    id: b.id,
    account_id: b.accountId,
    channel_id: b.channelId,
    created_ms: Date.parse(b.createdAt),
    state: b.state,
    doc: b,
    finished,
    canceled,
  }));
  const stats = records.flatMap(({ record: b, statistics }) => (statistics ? [{ broadcast_id: b.id, account_id: b.accountId, channel_id: b.channelId, ...statistics }] : []));
  await tx`
    WITH x AS (
      SELECT * FROM jsonb_to_recordset(${tx.json(rows as never)}) AS x(id text, account_id text, channel_id text,
        created_ms int8, state text, doc jsonb, finished int4, canceled int4)
    ), b AS (
      INSERT INTO broadcasts (id, account_id, channel_id, created_ms, state, doc)
      SELECT id, account_id, channel_id, created_ms, state, doc FROM x
    )
    INSERT INTO broadcast_counters (broadcast_id, account_id, channel_id, finished, canceled)
    SELECT id, account_id, channel_id, finished, canceled FROM x`;
  if (stats.length === 0) return;
  await tx`
    INSERT INTO broadcast_statistics (broadcast_id, account_id, channel_id, sent, delivered, opened, clicked, bounced, unsubscribed, complained)
    SELECT * FROM jsonb_to_recordset(${tx.json(stats as never)}) AS x(broadcast_id text, account_id text, channel_id text,
      sent int8, delivered int8, opened int8, clicked int8, bounced int8, unsubscribed int8, complained int8)`;
}

export async function writeEntries(tx: Tx, records: TransferRecords['broadcastEntries'][]): Promise<void> {
  const rows = records.map((e) => ({ broadcast_id: e.broadcastId, idx: e.index, account_id: e.accountId, channel_id: e.channelId, entry: e.entry }));
  await tx`
    INSERT INTO broadcast_entries (broadcast_id, idx, account_id, channel_id, entry)
    SELECT * FROM jsonb_to_recordset(${tx.json(rows as never)}) AS x(broadcast_id text, idx int4, account_id text, channel_id text, entry jsonb)`;
}

export async function writeFailures(tx: Tx, records: TransferRecords['broadcastFailures'][]): Promise<void> {
  const rows = records.map((f) => ({ broadcast_id: f.broadcastId, idx: f.failure.index, account_id: f.accountId, channel_id: f.channelId, doc: f.failure }));
  await tx`
    INSERT INTO broadcast_failures (broadcast_id, idx, account_id, channel_id, doc)
    SELECT * FROM jsonb_to_recordset(${tx.json(rows as never)}) AS x(broadcast_id text, idx int4, account_id text, channel_id text, doc jsonb)`;
}

export async function writeSuppressed(tx: Tx, records: TransferRecords['broadcastSuppressions'][]): Promise<void> {
  const rows = records.map((s) => ({ broadcast_id: s.broadcastId, email: s.email, account_id: s.accountId, channel_id: s.channelId }));
  await tx`INSERT INTO broadcast_suppressions ${tx(rows, 'broadcast_id', 'email', 'account_id', 'channel_id')}`;
}
