/** The accounts aggregates as transfer records: accounts, API keys, dashboard sessions, meta marks, secrets. */
import type { Account, ApiKey } from '../../../domain/types.js';
import type { DashboardSession } from '../../port/accounts.js';
import type { TransferRecords } from '../../port/transfer.js';
import { entriesOf, type ExportContext } from './context.js';

/** The meta keys that are records of the port (MetaPort); the others are the engine's own. */
export const META_KEYS = ['bootstrappedAt', 'initialKeyPending'] as const;
export const SECRET_KEYS = ['trackingSecret'] as const;

export function* accounts(c: ExportContext): Generator<Account> {
  for (const { value } of entriesOf(c.dbs.accounts)) yield value as Account;
}

/** Revoked keys too (revokedAt set): the API tells a revoked key from an unknown one. */
export function* apiKeys(c: ExportContext): Generator<ApiKey> {
  for (const { value } of entriesOf(c.dbs.apiKeys)) yield value as ApiKey;
}

export function* dashboardSessions(c: ExportContext): Generator<TransferRecords['dashboardSessions']> {
  for (const { key, value } of entriesOf(c.dbs.dashboardSessions)) yield { id: String(key), session: value as DashboardSession };
}

export function* meta(c: ExportContext): Generator<TransferRecords['meta']> {
  for (const key of META_KEYS) {
    const value = c.dbs.meta.get(key) as string | boolean | undefined;
    if (value !== undefined) yield { key, value };
  }
}

export function* secrets(c: ExportContext): Generator<TransferRecords['secrets']> {
  for (const name of SECRET_KEYS) {
    const value = c.dbs.meta.get(name) as Uint8Array | undefined;
    if (value !== undefined) yield { name, value: Buffer.from(value) };
  }
}
