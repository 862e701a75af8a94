/**
 * Received messages (issue 33) as transfer records: the record with its claim's lease number and
 * its raw bytes. A record whose raw bytes are gone is copied without them (the poster ends such a
 * message failed on either engine); raw bytes without a record are not a message and stay behind.
 * And the statistics' day counters of received messages.
 */
import type { InboundMessage } from '../../../domain/inbound-message.js';
import type { TransferRecords } from '../../port/transfer.js';
import { KEY_MAX } from '../layout.js';
import { entriesOf, type ExportContext } from './context.js';

export function* inboundMessages(c: ExportContext): Generator<TransferRecords['inboundMessages']> {
  for (const { key, value } of entriesOf(c.dbs.inboundMessages)) {
    const { message, lease } = value as { message: InboundMessage; lease: number };
    const raw = c.dbs.inboundRaw?.get(key) as Uint8Array | undefined;
    yield { message, lease, raw: raw ?? new Uint8Array(0) };
  }
}

export function* inboundDailyCounts(c: ExportContext): Generator<TransferRecords['inboundDailyCounts']> {
  for (const { key, value } of entriesOf(c.dbs.inboundMessageIndex, { start: ['n'], end: ['n', KEY_MAX] })) {
    const [, accountId, day, channelId] = key as ['n', string, number, string];
    yield { accountId, day, channelId, received: value as number };
  }
}
