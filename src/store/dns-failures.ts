/**
 * Hard DNS failures of a recipient domain (NXDOMAIN, or no MX and no address records: RFC 5321
 * 5.1), counted per account. One such answer bounces the message, but a domain that is missing
 * once may be a registrar or zone mistake fixed an hour later; suppressing its recipients for
 * good on a single lookup would outlive the mistake. So delivery suppresses a recipient only
 * when its domain has failed this way DNS_FAILURE_SUPPRESS_AFTER times within DNS_FAILURE_WINDOW_MS
 * (README, "Bounces and suppressions"). Per account, so one account's sends never decide
 * another account's suppressions.
 */
import type { RecipientResult } from '../domain/delivery-result.js';
import { dbsOf } from './databases.js';
import type { Store } from './env.js';

export const DNS_FAILURE_SUPPRESS_AFTER = 3;
export const DNS_FAILURE_WINDOW_MS = 7 * 86_400_000;

/**
 * Inside the outcome's write: counts one hard DNS failure of `domain` at `atMs` and says whether
 * the domain has now failed often enough within the window for its recipients to be suppressed.
 */
export function countHardDnsFailureInTxn(store: Store, o: { accountId: string; domain: string; atMs: number }): boolean {
  const db = dbsOf(store).dnsFailures;
  const key = [o.accountId, o.domain.toLowerCase()];
  const since = o.atMs - DNS_FAILURE_WINDOW_MS;
  const recent = ((db.get(key) as number[] | undefined) ?? []).filter((t) => t > since);
  const times = [...recent, o.atMs].slice(-DNS_FAILURE_SUPPRESS_AFTER);
  db.put(key, times);
  return times.length >= DNS_FAILURE_SUPPRESS_AFTER;
}

/** The recent hard DNS failures of the account's recipient domain (for tests and operators). */
export function hardDnsFailures(store: Store, accountId: string, domain: string): number[] {
  return (dbsOf(store).dnsFailures.get([accountId, domain.toLowerCase()]) as number[] | undefined) ?? [];
}

/** A hard bounce because the recipient's domain does not resolve (mx.ts answers 5.1.2, RFC 3463 X.1.2). */
function isDnsNameFailure(r: RecipientResult): boolean {
  return r.phase === 'dns' && r.outcome === 'bounced' && r.bounceType === 'hard' && r.enhancedCode === '5.1.2';
}

/**
 * Inside the outcome's write: which of an attempt's hard bounces may be suppressed. All may,
 * except DNS name failures while their domain is below the threshold; the failure is counted
 * once per attempt (one job is one recipient domain).
 */
export function suppressibleInTxn(store: Store, o: { accountId: string; domain: string; atMs: number; bounced: readonly RecipientResult[] }): (r: RecipientResult) => boolean {
  if (!o.bounced.some(isDnsNameFailure)) return () => true;
  const reached = countHardDnsFailureInTxn(store, o);
  return (r) => reached || !isDnsNameFailure(r);
}
