/**
 * Received messages (issue 33) as transfer records: the record with its claim's lease number and
 * its raw bytes. A record whose raw bytes are gone is copied without them (the poster ends such a
 * message failed on either engine); raw bytes without a record are not a message and stay behind.
 */
import type { InboundMessage } from '../../../domain/inbound-message.js';
import type { TransferRecords } from '../../port/transfer.js';
import { entriesOf, type ExportContext } from './context.js';

export function* inboundMessages(c: ExportContext): Generator<TransferRecords['inboundMessages']> {
  for (const { key, value } of entriesOf(c.dbs.inboundMessages)) {
    const { message, lease } = value as { message: InboundMessage; lease: number };
    const raw = c.dbs.inboundRaw?.get(key) as Uint8Array | undefined;
    yield { message, lease, raw: raw ?? new Uint8Array(0) };
  }
}
