/**
 * The rows one submission commit writes for its messages (schema/messages-broadcasts.ts): the
 * record, the body, the client Message-ID entry and, for a message the finishing stage composes
 * or signs, its waiting entry. Each kind is one multi-row INSERT whatever the number of messages
 * (a broadcast batch commits ~400 at once).
 */
import { bareMessageId } from '../../domain/message-id.js';
import type { MessageRecord } from '../../domain/types.js';
import { awaitsFinishing, type AcceptedMessage } from '../port/messages.js';
import type { Tx } from './client.js';
import { jsonParam } from './broadcast-rows.js';

/** A message as the commit stores it: the record with its status and open jobs. */
export interface StoredMessage {
  accepted: AcceptedMessage;
  record: MessageRecord;
}

/**
 * The client's own Message-ID, as a lookup key (RFC 5322 3.6.4): a feedback report (RFC 5965)
 * that carries only the original's headers names it. Our own ids (`<messageId@domain>`) are
 * found by their message id and need no entry (as the LMDB engine's client-message-ids.ts).
 */
export function clientIdOf(r: Pick<MessageRecord, 'id' | 'messageIdHeader'>): string | undefined {
  const id = bareMessageId(r.messageIdHeader);
  return id && !id.toLowerCase().startsWith(`${r.id}@`) ? id : undefined;
}

export async function insertMessages(tx: Tx, stored: readonly StoredMessage[]): Promise<void> {
  if (stored.length === 0) return;
  const rows = stored.map(({ record: r }) => ({
    id: r.id,
    account_id: r.accountId,
    channel_id: r.channelId,
    broadcast_id: r.broadcastId ?? null,
    status: r.status,
    open_jobs: r.openJobs,
    created_ms: Date.parse(r.createdAt),
    doc: jsonParam(tx, r),
  }));
  // Sent together: postgres.js pipelines the statements of one transaction (no round trip each).
  await Promise.all([
    tx`INSERT INTO messages ${tx(rows, 'id', 'account_id', 'channel_id', 'broadcast_id', 'status', 'open_jobs', 'created_ms', 'doc')}`,
    insertBodies(tx, stored),
    insertClientIds(tx, stored),
    insertWaiting(tx, stored),
  ]);
}

async function insertBodies(tx: Tx, stored: readonly StoredMessage[]): Promise<void> {
  const rows = stored
    .filter((s) => s.accepted.body !== undefined)
    .map(({ accepted: m, record: r }) => ({ message_id: r.id, account_id: r.accountId, channel_id: r.channelId, body: m.body! }));
  if (rows.length > 0) await tx`INSERT INTO message_bodies ${tx(rows, 'message_id', 'account_id', 'channel_id', 'body')}`;
}

async function insertClientIds(tx: Tx, stored: readonly StoredMessage[]): Promise<void> {
  const rows = stored.flatMap(({ record: r }) => {
    const clientId = clientIdOf(r);
    return clientId ? [{ account_id: r.accountId, client_id: clientId, message_id: r.id, channel_id: r.channelId }] : [];
  });
  if (rows.length > 0) await tx`INSERT INTO client_message_ids ${tx(rows, 'account_id', 'client_id', 'message_id', 'channel_id')} ON CONFLICT DO NOTHING`;
}

/**
 * The waiting entries of the messages the finishing stage composes or signs after the commit;
 * committed_ms is the record's createdAt (the oldest waiting one is the age index's first row).
 * The request to compose from is opaque to the store: kept as its JSON text.
 */
async function insertWaiting(tx: Tx, stored: readonly StoredMessage[]): Promise<void> {
  const rows = stored
    .filter((s) => awaitsFinishing(s.accepted))
    .map(({ accepted: m, record: r }) => ({
      message_id: r.id,
      account_id: r.accountId,
      channel_id: r.channelId,
      committed_ms: Date.parse(r.createdAt),
      domain: m.signingDomain ?? null,
      compose: m.compose === undefined ? null : Buffer.from(JSON.stringify(m.compose)),
    }));
  if (rows.length > 0) await tx`INSERT INTO unfinished_messages ${tx(rows, 'message_id', 'account_id', 'channel_id', 'committed_ms', 'domain', 'compose')}`;
}
