/** Channels (tombstones included), pending purges, sending domains and their DKIM private keys as transfer records. */
import type { SendingDomain } from '../../../domain/sending-domain.js';
import type { StoredChannel } from '../../port/channels.js';
import type { TransferRecords } from '../../port/transfer.js';
import type { ChannelPurge } from '../purge-queue.js';
import { entriesOf, type ExportContext } from './context.js';

export function* channels(c: ExportContext): Generator<StoredChannel> {
  for (const { value } of entriesOf(c.dbs.channels)) yield value as StoredChannel;
}

/**
 * A purge under way restarts from its first phase on the target: the target's purge works by
 * channel over whatever is left, so where LMDB's had got to does not matter.
 */
export function* channelPurges(c: ExportContext): Generator<TransferRecords['channelPurges']> {
  for (const { value } of entriesOf(c.dbs.channelPurges)) {
    const p = value as ChannelPurge;
    yield { channelId: p.channelId, accountId: p.accountId, deletedAtMs: Date.parse(p.deletedAt) };
  }
}

export function* domains(c: ExportContext): Generator<SendingDomain> {
  for (const { value } of entriesOf(c.dbs.domains)) yield value as SendingDomain;
}

export function* dkimKeys(c: ExportContext): Generator<TransferRecords['dkimKeys']> {
  for (const { key, value } of entriesOf(c.dbs.dkimKeys)) {
    const [domainId, selector] = key as [string, string];
    yield { domainId, selector, privateKeyPem: (value as { privateKeyPem: string }).privateKeyPem };
  }
}
