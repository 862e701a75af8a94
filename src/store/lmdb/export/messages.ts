/**
 * Messages as transfer records: the record, its body, its wait for the finishing stage, its
 * client Message-ID, the pending accounts' send quota and retention's parked messages.
 *
 * The account and channel the importing side files a body or an index entry under come from the
 * message's record; an entry whose record went already (a channel purge or retention half way:
 * LMDB removes an `unsigned` entry only when the finishing stage next looks at it) keeps its
 * place with an empty channel, so that it is copied as it is and the target deals with it as
 * LMDB would have.
 */
import type { MessageRecord } from '../../../domain/types.js';
import type { TransferRecords, UnfinishedEntry } from '../../port/transfer.js';
import type { PendingSignature } from '../signing.js';
import { KEY_MAX } from '../layout.js';
import { entriesOf, type ExportContext } from './context.js';

function recordOf(c: ExportContext, id: string): MessageRecord | undefined {
  return c.dbs.messages.get(id) as MessageRecord | undefined;
}

/** The record as the port returns it: acceptedSeq is LMDB's key into messageQueue, not the record's. */
export function* messages(c: ExportContext): Generator<MessageRecord> {
  for (const { value } of entriesOf(c.dbs.messages)) {
    const { acceptedSeq: _key, ...record } = value as MessageRecord;
    yield record;
  }
}

export function* messageBodies(c: ExportContext): Generator<TransferRecords['messageBodies']> {
  for (const { key, value } of entriesOf(c.dbs.bodies)) {
    const r = recordOf(c, String(key));
    yield { messageId: String(key), accountId: r?.accountId ?? '', channelId: r?.channelId ?? '', body: value as Uint8Array };
  }
}

/** An entry written before LMDB's age index has no committedMs: its record's createdAt, as indexPendingSignatures gives it. */
export function* unfinishedMessages(c: ExportContext): Generator<UnfinishedEntry> {
  for (const { key, value } of entriesOf(c.dbs.unsigned)) {
    const p = value as PendingSignature;
    const r = recordOf(c, String(key));
    yield {
      messageId: String(key),
      accountId: p.accountId,
      channelId: r?.channelId ?? '',
      committedMs: p.committedMs ?? (r ? Date.parse(r.createdAt) : c.nowMs),
      ...(p.domain !== undefined && { domain: p.domain }),
      ...(p.compose !== undefined && { compose: p.compose }),
      ...(p.failures !== undefined && { failures: p.failures }),
    };
  }
}

export function* clientMessageIds(c: ExportContext): Generator<TransferRecords['clientMessageIds']> {
  for (const { key } of entriesOf(c.dbs.clientMessageIds)) {
    const [accountId, clientId, messageId] = key as [string, string, string];
    yield { accountId, clientId, messageId, channelId: recordOf(c, messageId)?.channelId ?? '' };
  }
}

/** The `counters` entries ['sent', accountId] (store/lmdb/send-quota.ts). */
export function* sendQuota(c: ExportContext): Generator<TransferRecords['sendQuota']> {
  for (const { key, value } of entriesOf(c.dbs.counters, { start: ['sent'], end: ['sent', KEY_MAX] })) {
    yield { accountId: (key as [string, string])[1], used: value as number };
  }
}

export function* retentionPending(c: ExportContext): Generator<TransferRecords['retentionPending']> {
  for (const { key, value } of entriesOf(c.dbs.retentionPending)) {
    const r = recordOf(c, String(key));
    yield { messageId: String(key), accountId: r?.accountId ?? '', channelId: r?.channelId ?? '', createdMs: value as number };
  }
}
