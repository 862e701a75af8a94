/**
 * Helpers for the domain tests: a second account with its own key, channels and domains made
 * through the API (publishing their records: sending.ts).
 */
import { expect } from 'vitest';
import type { AccountState } from '../../src/domain/types.js';
import type { TestDaemon } from './daemon.js';
import type { TestDns } from './dns-server.js';
import { publishAll, type DnsRecordJson } from './sending.js';

/** Our host name in these tests: the return-path MX target and the SPF-authorized host. */
export const HOSTNAME = 'mx.postrider-test.net';
/** A public publicUrl, for the tests that expect no link-host warnings (the default, http://127.0.0.1:<port>, has two). */
export const PUBLIC_URL = 'https://mta.postrider-test.net';

/** What the last lookup of a record found (GET /domains/{id}, verify). */
export interface RecordCheckJson {
  result: 'match' | 'missing' | 'mismatch' | 'lookup_failed';
  checkedAt: string;
  found?: string[];
  foundTruncated?: boolean;
}

type RecordJson = DnsRecordJson & {
  lastCheckedAt: string | null;
  check?: RecordCheckJson;
  warnings?: Array<{ code: string; setting: string; message: string }>;
  replaces?: { host: string; value: string; lastCheckedAt: string | null };
};

export interface DnsRecords {
  domainKeyActive: RecordJson;
  domainKeyPending: RecordJson | null;
  /** The RSA companions of ed25519 keys (dual signing); present when the key has one. */
  domainKeyActiveCompanion?: RecordJson;
  domainKeyPendingCompanion?: RecordJson;
  returnPath: RecordJson[];
  /** The optional link-host CNAMEs (not needed for `verified`). */
  tracking?: RecordJson;
  unsubscribe?: RecordJson;
  /** The advisory _dmarc TXT (not needed for `verified`); `inheritedFrom` when it is the Organizational Domain's. */
  dmarc: RecordJson & { inheritedFrom?: string };
}

let accounts = 0;

/** A fresh account (active unless `state` says otherwise) and its account-level key. */
export async function newAccount(t: Pick<TestDaemon, 'daemon'>, o: { state?: AccountState } = {}): Promise<{ accountId: string; key: string }> {
  const account = await t.daemon.store.accounts.create({ name: `acct-${++accounts}`, state: o.state ?? 'active' });
  const { token } = await t.daemon.store.apiKeys.create({ accountId: account.id, channelId: null });
  return { accountId: account.id, key: token };
}

export async function channelKey(t: TestDaemon, accountId: string, channelId: string): Promise<string> {
  return (await t.daemon.store.apiKeys.create({ accountId, channelId })).token;
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

/** POST /domains, its records published in the test DNS server, and POST /domains/{id}/verify: a verified domain. */
export async function newVerifiedDomain(t: TestDaemon, dns: TestDns, body: Record<string, unknown>, key?: string) {
  const d = await newDomain(t, body, key);
  publishAll(dns, d.dnsRecords);
  const v = await t.api('POST', `/domains/${d.id}/verify`, { key });
  expect(v.status, JSON.stringify(v.body)).toBe(200);
  expect(v.body.verified, JSON.stringify(v.body)).toBe(true);
  return { ...d, verified: true };
}

/** A unique, real-looking name (DNS in tests is always the in-process server). */
export function uniqueName(prefix = 'mail'): string {
  return `${prefix}-${Math.random().toString(36).slice(2, 8)}.com`;
}
