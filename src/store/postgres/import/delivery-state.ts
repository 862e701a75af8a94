/**
 * Importing suppressions, idempotency records, TLS-RPT counts and reports, MTA-STS policies and
 * hard DNS failures (schema/delivery-state.ts, webhooks-idempotency.ts). TLS-RPT counts go
 * through the engine's own merge (tls-rpt-counts.ts), which keys each policy and failure detail
 * the way the engine's readers look them up and numbers failures in the order given.
 */
import type { PolicyCounts } from '../../../domain/tls-rpt.js';
import type { SuppressionRecord } from '../../../domain/types.js';
import type { TransferRecords } from '../../port/transfer.js';
import type { Tx } from '../client.js';
import { addCountsInTx } from '../tls-rpt-counts.js';

export async function writeSuppressions(tx: Tx, records: SuppressionRecord[]): Promise<void> {
  const rows = records.map((s) => ({ channel_id: s.channelId, mail_type: s.mailType, email: s.email, reason: s.reason, doc: s }));
  await tx`
    INSERT INTO suppressions (channel_id, mail_type, email, reason, doc)
    SELECT * FROM jsonb_to_recordset(${tx.json(rows as never)}) AS x(channel_id text, mail_type text, email text, reason text, doc jsonb)`;
}

export async function writeIdempotency(tx: Tx, records: TransferRecords['idempotency'][]): Promise<void> {
  const rows = records.map((r) => ({ account_id: r.accountId, key: r.key, expires_at_ms: r.record.expiresAtMs, doc: r.record }));
  await tx`
    INSERT INTO idempotency_records (account_id, key, expires_at_ms, doc)
    SELECT * FROM jsonb_to_recordset(${tx.json(rows as never)}) AS x(account_id text, key text, expires_at_ms int8, doc jsonb)`;
}

export async function writeTlsRptCounts(tx: Tx, records: PolicyCounts[]): Promise<void> {
  await addCountsInTx(tx, records);
}

/** Reports are few (one per day and policy domain): one statement each. */
export async function writeTlsRptReports(tx: Tx, records: TransferRecords['tlsRptReports'][]): Promise<void> {
  for (const { day, policyDomain, report: r } of records) {
    const gzip = Buffer.from(r.gzip.buffer, r.gzip.byteOffset, r.gzip.byteLength);
    await tx`
      INSERT INTO tls_rpt_reports (day, policy_domain, report_id, gzip, pending, attempts, next_at_ms)
      VALUES (${day}, ${policyDomain}, ${r.reportId}, ${gzip}, ${r.pending}::text[], ${r.attempts}, ${r.nextAtMs})`;
  }
}

export async function writeMtaSts(tx: Tx, records: TransferRecords['mtaStsPolicies'][]): Promise<void> {
  const rows = records.map((p) => ({ domain: p.domain, doc: p.policy }));
  await tx`INSERT INTO mta_sts_policies (domain, doc) SELECT * FROM jsonb_to_recordset(${tx.json(rows as never)}) AS x(domain text, doc jsonb)`;
}

export async function writeDnsFailures(tx: Tx, records: TransferRecords['dnsFailures'][]): Promise<void> {
  const rows = records.map((f) => ({ account_id: f.accountId, domain: f.domain, times: f.times }));
  await tx`
    INSERT INTO dns_failures (account_id, domain, times)
    SELECT * FROM jsonb_to_recordset(${tx.json(rows as never)}) AS x(account_id text, domain text, times int8[])`;
}
