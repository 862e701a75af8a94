/**
 * When a recipient domain's hard DNS failures (NXDOMAIN, or no MX and no address: RFC 5321 5.1)
 * suppress its recipients: at the DNS_FAILURE_SUPPRESS_AFTER-th failure within
 * DNS_FAILURE_WINDOW_MS, per account (docs/delivery.md, "Bounces and suppressions"). Every store
 * engine counts by this rule (store/lmdb/dns-failures.ts).
 */
export const DNS_FAILURE_SUPPRESS_AFTER = 3;
export const DNS_FAILURE_WINDOW_MS = 7 * 86_400_000;
