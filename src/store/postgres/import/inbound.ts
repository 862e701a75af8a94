/**
 * Importing received messages (issue 33) as repos/inbound-messages.ts writes them
 * (schema/inbound.ts): the record in doc, the columns the list and the claims use taken from it,
 * the claim's lease number kept (an attempt under an older claim stays stale), the raw bytes beside;
 * and the statistics' day counters of received messages.
 */
import type { TransferRecords } from '../../port/transfer.js';
import type { Tx } from '../client.js';

const bytes = (u: Uint8Array): Buffer => Buffer.from(u.buffer, u.byteOffset, u.byteLength);

export async function writeInboundMessages(tx: Tx, records: TransferRecords['inboundMessages'][]): Promise<void> {
  const rows = records.map(({ message: m, lease, raw }) => ({
    id: m.id,
    account_id: m.accountId,
    route_id: m.routeId,
    channel_id: m.channelId,
    received_at_ms: Date.parse(m.receivedAt),
    due_at_ms: m.nextAttemptAt === null ? null : Date.parse(m.nextAttemptAt),
    lease,
    doc: tx.json(m as never),
    raw: bytes(raw),
  }));
  await tx`INSERT INTO inbound_messages ${tx(rows, 'id', 'account_id', 'route_id', 'channel_id', 'received_at_ms', 'due_at_ms', 'lease', 'doc', 'raw')}`;
}

export async function writeInboundDailyCounts(tx: Tx, records: TransferRecords['inboundDailyCounts'][]): Promise<void> {
  const rows = records.map((r) => ({ account_id: r.accountId, day: r.day, channel_id: r.channelId, received: r.received }));
  await tx`INSERT INTO inbound_daily_counts ${tx(rows, 'account_id', 'day', 'channel_id', 'received')}`;
}
