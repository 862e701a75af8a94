/**
 * Importing channels (tombstones included), pending purges, sending domains and their DKIM keys
 * (schema/channels-domains.ts), with the columns the engine's verbs keep beside each record
 * (channels-write.ts, domains-write.ts): the lower-cased name, the times, the recheck flag.
 */
import { needsRecheck, type SendingDomain } from '../../../domain/sending-domain.js';
import type { StoredChannel } from '../../port/channels.js';
import type { TransferRecords } from '../../port/transfer.js';
import type { Tx } from '../client.js';

export async function writeChannels(tx: Tx, records: StoredChannel[]): Promise<void> {
  const rows = records.map((c) => ({
    id: c.id,
    account_id: c.accountId,
    // JavaScript's lower-casing, as the engine's own writes (the filter compares with it).
    name_lc: c.name.toLowerCase(),
    delivery_type: c.deliveryType,
    created_at_ms: Date.parse(c.createdAt),
    deleted_at_ms: c.deletedAt ? Date.parse(c.deletedAt) : null,
    doc: c,
  }));
  await tx`
    INSERT INTO channels (id, account_id, name_lc, delivery_type, created_at_ms, deleted_at_ms, doc)
    SELECT * FROM jsonb_to_recordset(${tx.json(rows as never)}) AS x(id text, account_id text, name_lc text,
      delivery_type text, created_at_ms int8, deleted_at_ms int8, doc jsonb)`;
}

export async function writeChannelPurges(tx: Tx, records: TransferRecords['channelPurges'][]): Promise<void> {
  const rows = records.map((p) => ({ channel_id: p.channelId, account_id: p.accountId, deleted_at_ms: p.deletedAtMs }));
  await tx`
    INSERT INTO channel_purges (channel_id, account_id, deleted_at_ms)
    SELECT * FROM jsonb_to_recordset(${tx.json(rows as never)}) AS x(channel_id text, account_id text, deleted_at_ms int8)`;
}

export async function writeDomains(tx: Tx, records: SendingDomain[]): Promise<void> {
  const rows = records.map((d) => ({ id: d.id, account_id: d.accountId, name: d.name, created_at_ms: Date.parse(d.createdAt), recheck: needsRecheck(d), doc: d }));
  await tx`
    INSERT INTO domains (id, account_id, name, created_at_ms, recheck, doc)
    SELECT * FROM jsonb_to_recordset(${tx.json(rows as never)}) AS x(id text, account_id text, name text,
      created_at_ms int8, recheck boolean, doc jsonb)`;
}

export async function writeDkimKeys(tx: Tx, records: TransferRecords['dkimKeys'][]): Promise<void> {
  const rows = records.map((k) => ({ domain_id: k.domainId, selector: k.selector, private_key_pem: k.privateKeyPem }));
  await tx`INSERT INTO dkim_keys ${tx(rows, 'domain_id', 'selector', 'private_key_pem')}`;
}
