/** Suppressions, idempotency records, TLS-RPT counts and reports, MTA-STS policies and hard DNS failures as transfer records. */
import type { PolicyCounts } from '../../../domain/tls-rpt.js';
import type { MailType, SuppressionRecord } from '../../../domain/types.js';
import type { IdempotencyRecord } from '../../port/idempotency.js';
import type { CachedStsPolicy, TlsRptReport } from '../../port/delivery-state.js';
import type { TransferRecords } from '../../port/transfer.js';
import { KEY_MAX } from '../layout.js';
import { entriesOf, type ExportContext } from './context.js';

/** The address as keyed (lower case): the record is the one the key found, whatever its own spelling. */
export function* suppressions(c: ExportContext): Generator<SuppressionRecord> {
  for (const { key, value } of entriesOf(c.dbs.suppressions)) {
    const [channelId, mailType, email] = key as [string, MailType, string];
    yield { ...(value as SuppressionRecord), channelId, mailType, email };
  }
}

/** Expired ones too: the target's sweeper removes them as LMDB's would. */
export function* idempotency(c: ExportContext): Generator<TransferRecords['idempotency']> {
  for (const { key, value } of entriesOf(c.dbs.idempotency)) {
    const [accountId, k] = key as [string, string];
    yield { accountId, key: k, record: value as IdempotencyRecord };
  }
}

/** ['c', day, policyDomain, policyKey] → the policy's counts; the target keys them by the same policyKey. */
export function* tlsRptCounts(c: ExportContext): Generator<PolicyCounts> {
  for (const { key, value } of entriesOf(c.dbs.tlsRpt, { start: ['c'], end: ['c', KEY_MAX] })) {
    const [, day, policyDomain] = key as [string, string, string];
    yield { day, policyDomain, ...(value as Omit<PolicyCounts, 'day' | 'policyDomain'>) };
  }
}

export function* tlsRptReports(c: ExportContext): Generator<TransferRecords['tlsRptReports']> {
  for (const { key, value } of entriesOf(c.dbs.tlsRpt, { start: ['r'], end: ['r', KEY_MAX] })) {
    const [, day, policyDomain] = key as [string, string, string];
    yield { day, policyDomain, report: value as TlsRptReport };
  }
}

export function* mtaStsPolicies(c: ExportContext): Generator<TransferRecords['mtaStsPolicies']> {
  for (const { key, value } of entriesOf(c.dbs.mtaStsPolicies)) yield { domain: String(key), policy: value as CachedStsPolicy };
}

export function* dnsFailures(c: ExportContext): Generator<TransferRecords['dnsFailures']> {
  for (const { key, value } of entriesOf(c.dbs.dnsFailures)) {
    const [accountId, domain] = key as [string, string];
    yield { accountId, domain, times: value as number[] };
  }
}
