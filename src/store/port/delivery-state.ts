/**
 * State delivery keeps between attempts: TLS-RPT counts and reports, cached MTA-STS policies, hard DNS failure counts per recipient domain.
 *
 * Part of the store port (store/port/index.ts): asynchronous verbs that take and return plain
 * data; what must commit together is one verb. Implemented by the LMDB engine in
 * store/lmdb/repos/ and checked by the contract suite in test/store-contract/.
 */
import type { StsPolicy } from '../../mta-sts/policy.js';
import type { PolicyCounts } from '../../domain/tls-rpt.js';

/** A day's TLS-RPT report for one policy domain, from the moment it is made until its day is removed. */
export interface TlsRptReport {
  reportId: string;
  /** The gzipped JSON report (RFC 8460 5.1), as sent to every rua. */
  gzip: Uint8Array;
  /** rua URIs not yet reached; empty once delivered or given up. */
  pending: string[];
  /** Delivery attempts made so far. */
  attempts: number;
  /** When pending URIs are tried again. */
  nextAtMs: number;
}

/** A day (YYYY-MM-DD, UTC) and policy domain: what one report covers. */
export interface TlsRptDay {
  day: string;
  policyDomain: string;
}

/** TLS-RPT (RFC 8460) counts per UTC day, policy domain and policy, and the reports made of them. */
export interface TlsRptPort {
  /**
   * Adds a batch of counts (a recorder flush) to what is kept for their day, domain and policy,
   * summing successes and each failure detail (domain/tls-rpt-keys.ts). One atomic merge, never a read
   * by the caller then a write: two nodes flushing the same day lose nothing.
   */
  addCounts(batch: readonly PolicyCounts[]): Promise<void>;
  /** The counts of one day and policy domain, one entry per policy. */
  counts(day: string, policyDomain: string): Promise<PolicyCounts[]>;
  /** Days before `beforeDay` with counts and no report yet, with their policy domains. */
  unreportedDays(beforeDay: string): Promise<TlsRptDay[]>;
  /**
   * Stores the day's report for the domain if it has none yet (insert-if-absent): false when
   * one was made already (by another run), which is then left as it is.
   */
  createReport(day: string, policyDomain: string, report: TlsRptReport): Promise<boolean>;
  /** Stores the report after a delivery round (its pending URIs, attempts and next time). */
  updateReport(day: string, policyDomain: string, report: TlsRptReport): Promise<void>;
  report(day: string, policyDomain: string): Promise<TlsRptReport | undefined>;
  /** Reports with URIs still pending whose next attempt is due at nowMs. */
  dueReports(nowMs: number): Promise<Array<TlsRptDay & { report: TlsRptReport }>>;
  /** Removes counts and reports of days before `beforeDay`; returns how many entries went. */
  removeBefore(beforeDay: string): Promise<number>;
}

/** A recipient domain's MTA-STS policy as cached (RFC 8461 5.1). */
export interface CachedStsPolicy {
  /** The id of the TXT record the policy was fetched for (RFC 8461 3.1). */
  id: string;
  policy: StsPolicy;
  fetchedAtMs: number;
  /** fetchedAtMs + max_age: after it the policy no longer applies (RFC 8461 3.2). */
  expiresAtMs: number;
}

/** The MTA-STS policy cache, kept across restarts (RFC 8461 5.1 lets it stand in for a missing TXT record). */
export interface MtaStsPort {
  /** The cached policy of the recipient domain (lower case), expired or not. */
  get(domain: string): Promise<CachedStsPolicy | undefined>;
  /** Stores a freshly fetched policy in place of the domain's previous one (last writer wins: both are fresh). */
  save(domain: string, entry: CachedStsPolicy): Promise<void>;
}

/** Hard DNS failures (NXDOMAIN, no MX and no address) of a recipient domain, per account (store/lmdb/dns-failures.ts). */
export interface DnsFailuresPort {
  /**
   * Counts one hard DNS failure of the account's recipient domain at atMs and says whether it
   * has now failed often enough within the window for its recipients to be suppressed. One
   * atomic update of the domain's recent failures (outcomes count theirs inside recordOutcomes).
   */
  countFailure(o: { accountId: string; domain: string; atMs: number }): Promise<boolean>;
  /** The recent hard DNS failures (times in ms) of the account's recipient domain. */
  recent(accountId: string, domain: string): Promise<number[]>;
}
