/**
 * TLS-RPT (RFC 8460) state: per UTC day, policy domain and policy, how many TLS sessions
 * succeeded and how many failed with which details; and per day and policy domain, the report
 * made of them and where it still has to go. Counts arrive in batches from the in-memory
 * recorder (tls-rpt/recorder.ts), one write per flush. Everything of a day goes when the day
 * is older than tlsRpt.keepDays.
 *
 * Keys (db tlsRpt): ['c', day, policyDomain, policyKey] → StoredCounts,
 * ['r', day, policyDomain] → TlsRptReport. day is 'YYYY-MM-DD' (UTC), so keys sort by day.
 */
import { failureKey, policyKey } from '../../domain/tls-rpt-keys.js';
import type { PolicyCounts } from '../../domain/tls-rpt.js';
import type { TlsRptDay, TlsRptReport } from '../port/delivery-state.js';
import { dbsOf } from './databases.js';
import type { Store } from './env.js';
import { KEY_MAX } from './layout.js';

export type { TlsRptReport } from '../port/delivery-state.js';
export { failureKey, policyKey } from '../../domain/tls-rpt-keys.js';

type StoredCounts = Omit<PolicyCounts, 'day' | 'policyDomain'>;

/** Inside a write: adds counts to what the store has for their day, domain and policy. */
function addTlsRptCountsInTxn(store: Store, batch: readonly PolicyCounts[]): void {
  const db = dbsOf(store).tlsRpt;
  for (const c of batch) {
    const key = ['c', c.day, c.policyDomain, policyKey(c.policy)];
    const old = db.get(key) as StoredCounts | undefined;
    const failures = new Map((old?.failures ?? []).map((f) => [failureKey(f.failure), { ...f }]));
    for (const f of c.failures) {
      const k = failureKey(f.failure);
      const have = failures.get(k);
      if (have) have.count += f.count;
      else failures.set(k, { ...f });
    }
    db.put(key, { policy: c.policy, success: (old?.success ?? 0) + c.success, failures: [...failures.values()] } satisfies StoredCounts);
  }
}

/** One write for the whole batch (a recorder flush). */
export async function addTlsRptCounts(store: Store, batch: readonly PolicyCounts[]): Promise<void> {
  if (batch.length === 0) return;
  await store.write(() => addTlsRptCountsInTxn(store, batch));
}

/** The counts of one day and policy domain, one entry per policy. */
export function tlsRptCounts(store: Store, day: string, policyDomain: string): PolicyCounts[] {
  const range = dbsOf(store).tlsRpt.getRange({ start: ['c', day, policyDomain], end: ['c', day, policyDomain, KEY_MAX] });
  return [...range].map(({ value }) => ({ day, policyDomain, ...(value as StoredCounts) }));
}

/** Days before `beforeDay` with counts but no report yet, and their policy domains. */
export function unreportedTlsRptDays(store: Store, beforeDay: string): TlsRptDay[] {
  const db = dbsOf(store).tlsRpt;
  const seen = new Set<string>();
  const out: TlsRptDay[] = [];
  for (const key of db.getKeys({ start: ['c'], end: ['c', beforeDay] })) {
    const [, day, policyDomain] = key as [string, string, string];
    const id = `${day} ${policyDomain}`;
    if (seen.has(id)) continue;
    seen.add(id);
    if (db.get(['r', day, policyDomain]) === undefined) out.push({ day, policyDomain });
  }
  return out;
}

export async function saveTlsRptReport(store: Store, day: string, policyDomain: string, report: TlsRptReport): Promise<void> {
  await store.write(() => dbsOf(store).tlsRpt.put(['r', day, policyDomain], report));
}

/** Stores the day's report unless it has one already (insert-if-absent, in one write); false when it had. */
export async function createTlsRptReport(store: Store, day: string, policyDomain: string, report: TlsRptReport): Promise<boolean> {
  const db = dbsOf(store).tlsRpt;
  return store.write(() => {
    if (db.doesExist(['r', day, policyDomain])) return false;
    db.put(['r', day, policyDomain], report);
    return true;
  });
}

export function tlsRptReport(store: Store, day: string, policyDomain: string): TlsRptReport | undefined {
  return dbsOf(store).tlsRpt.get(['r', day, policyDomain]) as TlsRptReport | undefined;
}

/** Reports with URIs still pending whose next attempt is due at `nowMs`. */
export function dueTlsRptReports(store: Store, nowMs: number): Array<TlsRptDay & { report: TlsRptReport }> {
  const out: Array<TlsRptDay & { report: TlsRptReport }> = [];
  for (const { key, value } of dbsOf(store).tlsRpt.getRange({ start: ['r'], end: ['r', KEY_MAX] })) {
    const report = value as TlsRptReport;
    if (report.pending.length === 0 || report.nextAtMs > nowMs) continue;
    const [, day, policyDomain] = key as [string, string, string];
    out.push({ day, policyDomain, report });
  }
  return out;
}

/** Removes counts and reports of days before `beforeDay`; returns how many entries went. */
export async function removeTlsRptBefore(store: Store, beforeDay: string): Promise<number> {
  const db = dbsOf(store).tlsRpt;
  const keys = [...db.getKeys({ start: ['c'], end: ['c', beforeDay] }), ...db.getKeys({ start: ['r'], end: ['r', beforeDay] })];
  if (keys.length === 0) return 0;
  await store.write(() => {
    for (const k of keys) db.remove(k);
  });
  return keys.length;
}
