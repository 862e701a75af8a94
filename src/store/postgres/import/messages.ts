/**
 * Importing messages (schema/messages-broadcasts.ts): records with the columns the submission
 * commit writes beside them (message-rows.ts), bodies and waiting entries as bytes, the client
 * Message-ID index, the send quota and retention's parked messages.
 */
import type { MessageRecord } from '../../../domain/types.js';
import type { TransferRecords, UnfinishedEntry } from '../../port/transfer.js';
import type { Tx } from '../client.js';

const bytes = (u: Uint8Array): Buffer => Buffer.from(u.buffer, u.byteOffset, u.byteLength);

export async function writeMessages(tx: Tx, records: MessageRecord[]): Promise<void> {
  const rows = records.map((r) => ({
    id: r.id,
    account_id: r.accountId,
    channel_id: r.channelId,
    broadcast_id: r.broadcastId ?? null,
    status: r.status,
    open_jobs: r.openJobs,
    created_ms: Date.parse(r.createdAt),
    doc: r,
  }));
  await tx`
    INSERT INTO messages (id, account_id, channel_id, broadcast_id, status, open_jobs, created_ms, doc)
    SELECT * FROM jsonb_to_recordset(${tx.json(rows as never)}) AS x(id text, account_id text, channel_id text,
      broadcast_id text, status text, open_jobs int4, created_ms int8, doc jsonb)`;
}

export async function writeBodies(tx: Tx, records: TransferRecords['messageBodies'][]): Promise<void> {
  const rows = records.map((b) => ({ message_id: b.messageId, account_id: b.accountId, channel_id: b.channelId, body: bytes(b.body) }));
  await tx`INSERT INTO message_bodies ${tx(rows, 'message_id', 'account_id', 'channel_id', 'body')}`;
}

/** The request to compose from is kept as its JSON text, as message-rows.ts insertWaiting writes it. */
export async function writeUnfinished(tx: Tx, records: UnfinishedEntry[]): Promise<void> {
  const rows = records.map((u) => ({
    message_id: u.messageId,
    account_id: u.accountId,
    channel_id: u.channelId,
    committed_ms: u.committedMs,
    domain: u.domain ?? null,
    compose: u.compose === undefined ? null : Buffer.from(JSON.stringify(u.compose)),
    failures: u.failures === undefined ? null : tx.json(u.failures as never),
  }));
  await tx`INSERT INTO unfinished_messages ${tx(rows, 'message_id', 'account_id', 'channel_id', 'committed_ms', 'domain', 'compose', 'failures')}`;
}

export async function writeClientIds(tx: Tx, records: TransferRecords['clientMessageIds'][]): Promise<void> {
  const rows = records.map((c) => ({ account_id: c.accountId, client_id: c.clientId, message_id: c.messageId, channel_id: c.channelId }));
  await tx`INSERT INTO client_message_ids ${tx(rows, 'account_id', 'client_id', 'message_id', 'channel_id')}`;
}

export async function writeSendQuota(tx: Tx, records: TransferRecords['sendQuota'][]): Promise<void> {
  const rows = records.map((q) => ({ account_id: q.accountId, used: q.used }));
  await tx`INSERT INTO send_quota ${tx(rows, 'account_id', 'used')}`;
}

export async function writeRetentionPending(tx: Tx, records: TransferRecords['retentionPending'][]): Promise<void> {
  const rows = records.map((p) => ({ message_id: p.messageId, account_id: p.accountId, channel_id: p.channelId, created_ms: p.createdMs }));
  await tx`INSERT INTO retention_pending ${tx(rows, 'message_id', 'account_id', 'channel_id', 'created_ms')}`;
}
