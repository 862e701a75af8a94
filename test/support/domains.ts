/**
 * Helpers for the domain tests: a second account with its own key, channels and domains made
 * through the API (publishing their records: sending.ts).
 */
import { expect } from 'vitest';
import { createAccount } from '../../src/store/accounts.js';
import { createApiKey } from '../../src/store/api-keys.js';
import type { AccountState } from '../../src/domain/types.js';
import type { TestDaemon } from './daemon.js';
import type { DnsRecordJson } from './sending.js';

/** Our host name in these tests: the return-path MX target and the SPF-authorized host. */
export const HOSTNAME = 'mx.postrider-test.net';

export interface DnsRecords {
  domainKeyActive: DnsRecordJson & { lastCheckedAt: string | null };
  domainKeyPending: (DnsRecordJson & { lastCheckedAt: string | null }) | null;
  /** The RSA companions of ed25519 keys (dual signing); present when the key has one. */
  domainKeyActiveCompanion?: DnsRecordJson & { lastCheckedAt: string | null };
  domainKeyPendingCompanion?: DnsRecordJson & { lastCheckedAt: string | null };
  returnPath: (DnsRecordJson & { lastCheckedAt: string | null })[];
  /** The optional link-host CNAMEs (not needed for `verified`). */
  tracking?: DnsRecordJson & { lastCheckedAt: string | null };
  unsubscribe?: DnsRecordJson & { lastCheckedAt: string | null };
  /** The advisory _dmarc TXT (not needed for `verified`); `inheritedFrom` when it is the Organizational Domain's. */
  dmarc: DnsRecordJson & { lastCheckedAt: string | null; inheritedFrom?: string };
}

let accounts = 0;

/** A fresh account (active unless `state` says otherwise) and its account-level key. */
export async function newAccount(t: Pick<TestDaemon, 'daemon'>, o: { state?: AccountState } = {}): Promise<{ accountId: string; key: string }> {
  const account = await createAccount(t.daemon.store, { name: `acct-${++accounts}`, state: o.state ?? 'active' });
  const { token } = await createApiKey(t.daemon.store, { accountId: account.id, channelId: null });
  return { accountId: account.id, key: token };
}

export async function channelKey(t: TestDaemon, accountId: string, channelId: string): Promise<string> {
  return (await createApiKey(t.daemon.store, { accountId, channelId })).token;
}

export async function newChannel(t: TestDaemon, key?: string, name = 'ch'): Promise<string> {
  const res = await t.api('POST', '/channels', { key, body: { name } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.id as string;
}

/** POST /domains, expecting 200. */
export async function newDomain(t: TestDaemon, body: Record<string, unknown>, key?: string) {
  const res = await t.api('POST', '/domains', { key, body });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as { id: string; name: string; verified: boolean; channels: unknown[]; dnsRecords: DnsRecords };
}

/** A unique, real-looking name (DNS in tests is always the in-process server). */
export function uniqueName(prefix = 'mail'): string {
  return `${prefix}-${Math.random().toString(36).slice(2, 8)}.com`;
}
