/**
 * TLS-RPT (RFC 8460) counts as PostgreSQL keeps them: one row per UTC day, policy domain and
 * policy (tls_rpt_counts) and one per failure detail of it (tls_rpt_failures), both summed by
 * upserts, so a recorder flush is one atomic merge that loses nothing when nodes flush the same
 * day at once: a conflicting upsert waits for the other's row lock and adds to the committed sum.
 */
import { failureKey, policyKey } from '../../domain/tls-rpt-keys.js';
import type { FailureCount, PolicyCounts } from '../../domain/tls-rpt.js';
import type { Db, Tx } from './client.js';

interface CountRow {
  day: string;
  policyDomain: string;
  policyKey: string;
  policy: PolicyCounts['policy'];
  success: number;
}

interface FailureRow {
  day: string;
  policyDomain: string;
  policyKey: string;
  failureKey: string;
  failure: FailureCount['failure'];
  count: number;
}

/**
 * The batch merged by key first (one ON CONFLICT DO UPDATE may not touch a row twice), as the
 * LMDB engine merges it: successes summed, each failure detail summed, in the order first seen.
 */
function mergeBatch(batch: readonly PolicyCounts[]): { counts: CountRow[]; failures: FailureRow[] } {
  const counts = new Map<string, CountRow>();
  const failures = new Map<string, FailureRow>();
  for (const c of batch) {
    const pk = policyKey(c.policy);
    const id = JSON.stringify([c.day, c.policyDomain, pk]);
    const row = counts.get(id) ?? { day: c.day, policyDomain: c.policyDomain, policyKey: pk, policy: c.policy, success: 0 };
    row.success += c.success;
    counts.set(id, row);
    for (const f of c.failures) {
      const fk = failureKey(f.failure);
      const fid = JSON.stringify([id, fk]);
      const have = failures.get(fid);
      if (have) have.count += f.count;
      else failures.set(fid, { day: c.day, policyDomain: c.policyDomain, policyKey: pk, failureKey: fk, failure: f.failure, count: f.count });
    }
  }
  return { counts: [...counts.values()], failures: [...failures.values()] };
}

const byKey = (a: CountRow, b: CountRow): number =>
  a.day < b.day ? -1 : a.day > b.day ? 1 : a.policyDomain < b.policyDomain ? -1 : a.policyDomain > b.policyDomain ? 1 : a.policyKey < b.policyKey ? -1 : a.policyKey > b.policyKey ? 1 : 0;

/**
 * Inside one transaction: the policy rows first, in key order (two flushes lock shared rows in
 * the same order: no deadlock), then their failure rows, which only a holder of the policy row's
 * lock writes. New failure details get their ord in the order first seen.
 */
export async function addCountsInTx(tx: Tx, batch: readonly PolicyCounts[]): Promise<void> {
  const { counts, failures } = mergeBatch(batch);
  counts.sort(byKey);
  await tx`
    INSERT INTO tls_rpt_counts (day, policy_domain, policy_key, policy, success)
    SELECT r->>'day', r->>'policyDomain', r->>'policyKey', r->'policy', (r->>'success')::int8
    FROM jsonb_array_elements(${tx.json(counts as never)}::jsonb) WITH ORDINALITY AS e(r, i) ORDER BY i
    ON CONFLICT (day, policy_domain, policy_key) DO UPDATE SET success = tls_rpt_counts.success + excluded.success`;
  if (failures.length === 0) return;
  await tx`
    INSERT INTO tls_rpt_failures (day, policy_domain, policy_key, failure_key, failure, count)
    SELECT r->>'day', r->>'policyDomain', r->>'policyKey', r->>'failureKey', r->'failure', (r->>'count')::int8
    FROM jsonb_array_elements(${tx.json(failures as never)}::jsonb) WITH ORDINALITY AS e(r, i) ORDER BY i
    ON CONFLICT (day, policy_domain, policy_key, failure_key) DO UPDATE SET count = tls_rpt_failures.count + excluded.count`;
}

/** The counts of one day and policy domain, one entry per policy (in policy key order, as LMDB's keys). */
export async function countsOf(db: Db, day: string, policyDomain: string): Promise<PolicyCounts[]> {
  const rows = await db<{ policy: PolicyCounts['policy']; success: number; failures: FailureCount[] }[]>`
    SELECT c.policy, c.success,
      coalesce((SELECT jsonb_agg(jsonb_build_object('failure', f.failure, 'count', f.count) ORDER BY f.ord)
                FROM tls_rpt_failures f
                WHERE f.day = c.day AND f.policy_domain = c.policy_domain AND f.policy_key = c.policy_key), '[]'::jsonb) AS failures
    FROM tls_rpt_counts c
    WHERE c.day = ${day} AND c.policy_domain = ${policyDomain}
    ORDER BY c.policy_key`;
  return rows.map((r) => ({ day, policyDomain, policy: r.policy, success: r.success, failures: r.failures }));
}
