/**
 * Importing the accounts aggregates (schema/accounts.ts): the columns beside each record are the
 * ones the engine's own verbs write with it (repos/accounts.ts, api-keys.ts, sessions.ts, meta.ts).
 * Every writer is one multi-row statement inside the batch's transaction.
 */
import type { Account, ApiKey } from '../../../domain/types.js';
import type { TransferRecords } from '../../port/transfer.js';
import type { Tx } from '../client.js';

export async function writeAccounts(tx: Tx, records: Account[]): Promise<void> {
  await tx`
    INSERT INTO accounts (id, doc)
    SELECT r->>'id', r FROM jsonb_array_elements(${tx.json(records as never)}::jsonb) AS r`;
}

/** A revoked key keeps its row (the API tells it from an unknown one); the hash index finds live keys only. */
export async function writeApiKeys(tx: Tx, records: ApiKey[]): Promise<void> {
  const rows = records.map((k) => ({
    id: k.id,
    account_id: k.accountId,
    channel_id: k.channelId,
    hash: k.hash,
    created_at_ms: Date.parse(k.createdAt),
    revoked_at_ms: k.revokedAt ? Date.parse(k.revokedAt) : null,
    doc: k,
  }));
  await tx`
    INSERT INTO api_keys (id, account_id, channel_id, hash, created_at_ms, revoked_at_ms, doc)
    SELECT * FROM jsonb_to_recordset(${tx.json(rows as never)}) AS x(id text, account_id text, channel_id text, hash text,
      created_at_ms int8, revoked_at_ms int8, doc jsonb)`;
}

export async function writeSessions(tx: Tx, records: TransferRecords['dashboardSessions'][]): Promise<void> {
  const rows = records.map(({ id, session: s }) => ({
    id,
    key_id: s.keyId,
    account_id: s.accountId,
    created_at_ms: s.createdAtMs,
    last_seen_at_ms: s.lastSeenAtMs,
    expires_at_ms: s.expiresAtMs,
  }));
  await tx`
    INSERT INTO dashboard_sessions (id, key_id, account_id, created_at_ms, last_seen_at_ms, expires_at_ms)
    SELECT * FROM jsonb_to_recordset(${tx.json(rows as never)}) AS x(id text, key_id text, account_id text,
      created_at_ms int8, last_seen_at_ms int8, expires_at_ms int8)`;
}

/** The first-start marks as MetaPort writes them: the key, its JSON value. */
export async function writeMeta(tx: Tx, records: TransferRecords['meta'][]): Promise<void> {
  await tx`
    INSERT INTO meta (key, value)
    SELECT r->>'key', r->'value' FROM jsonb_array_elements(${tx.json(records as never)}::jsonb) AS r`;
}

export async function writeSecrets(tx: Tx, records: TransferRecords['secrets'][]): Promise<void> {
  const rows = records.map((s) => ({ name: s.name, value: Buffer.from(s.value.buffer, s.value.byteOffset, s.value.byteLength) }));
  await tx`INSERT INTO secrets ${tx(rows, 'name', 'value')}`;
}
