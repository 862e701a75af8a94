/**
 * When a recipient domain's hard DNS failures (NXDOMAIN, or no MX and no address: RFC 5321 5.1)
 * suppress its recipients: at the DNS_FAILURE_SUPPRESS_AFTER-th failure within
 * DNS_FAILURE_WINDOW_MS, per account (docs/delivery.md, "Bounces and suppressions"). Every store
 * engine counts by this rule (store/lmdb/dns-failures.ts, store/postgres/dns-failure-count.ts).
 */
import type { RecipientResult } from './delivery-result.js';

export const DNS_FAILURE_SUPPRESS_AFTER = 3;
export const DNS_FAILURE_WINDOW_MS = 7 * 86_400_000;

/** A hard bounce because the recipient's domain does not resolve (mx.ts answers 5.1.2, RFC 3463 X.1.2). */
export function isDnsNameFailure(r: RecipientResult): boolean {
  return r.phase === 'dns' && r.outcome === 'bounced' && r.bounceType === 'hard' && r.enhancedCode === '5.1.2';
}
