/**
 * Hard DNS failures of a recipient domain (NXDOMAIN, or no MX and no address records: RFC 5321
 * 5.1), counted per account. One such answer bounces the message, but a domain that is missing
 * once may be a registrar or zone mistake fixed an hour later; suppressing its recipients for
 * good on a single lookup would outlive the mistake. So delivery suppresses a recipient only
 * when its domain has failed this way DNS_FAILURE_SUPPRESS_AFTER times within DNS_FAILURE_WINDOW_MS
 * (docs/delivery.md, "Bounces and suppressions"). Per account, so one account's sends never decide
 * another account's suppressions.
 */
import type { RecipientResult } from '../../domain/delivery-result.js';
import { DNS_FAILURE_SUPPRESS_AFTER, DNS_FAILURE_WINDOW_MS, isDnsNameFailure } from '../../domain/dns-failure-rule.js';
import { dbsOf } from './databases.js';
import type { Store } from './env.js';
import { pageAfter } from './page-after.js';
import type { DnsFailureKey, DnsFailureSweep } from '../port/retention.js';

export { DNS_FAILURE_SUPPRESS_AFTER, DNS_FAILURE_WINDOW_MS } from '../../domain/dns-failure-rule.js';

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

export type { DnsFailureKey, DnsFailureSweep } from '../port/retention.js';

/**
 * Retention (retention/sweeper.ts): one short transaction over at most `batch` entries after
 * `after`, in key order. Failures older than the window no longer count (countHardDnsFailureInTxn
 * drops them too, but only when its domain fails again), so they go, and an entry left with none
 * goes with them: without this a domain that failed once would keep its entry for good.
 */
export async function sweepDnsFailuresBatch(store: Store, o: { nowMs: number; batch: number; after?: DnsFailureKey }): Promise<DnsFailureSweep> {
  const db = dbsOf(store).dnsFailures;
  const since = o.nowMs - DNS_FAILURE_WINDOW_MS;
  return store.write(() => {
    // Read the page first, then change it (page-after.ts); one more than the batch says whether there is more.
    const page = pageAfter(o.after, o.batch + 1, (range) => db.getRange(range), ({ key }) => key as DnsFailureKey, sameKey);
    const mine = page.slice(0, o.batch);
    let removed = 0;
    for (const { key, value } of mine) {
      const times = value as number[];
      const recent = times.filter((t) => t > since);
      if (recent.length === times.length) continue;
      if (recent.length === 0) {
        db.remove(key);
        removed++;
      } else db.put(key, recent);
    }
    return page.length > o.batch ? { removed, next: mine[mine.length - 1].key as DnsFailureKey } : { removed };
  });
}

function sameKey(a: DnsFailureKey, b: DnsFailureKey): boolean {
  return a[0] === b[0] && a[1] === b[1];
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
