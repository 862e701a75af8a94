/** DnsFailuresPort over the dns_failures table: one upsert per failure (dns-failure-count.ts). */
import type { DnsFailuresPort } from '../../port/delivery-state.js';
import type { PgContext } from '../context.js';
import { countDnsFailure, recentDnsFailures } from '../dns-failure-count.js';

export function pgDnsFailures(ctx: PgContext): DnsFailuresPort {
  return {
    // A single statement is its own transaction, durable once it resolves (synchronous_commit on).
    countFailure: (o) => countDnsFailure(ctx.sql, o),
    recent: (accountId, domain) => recentDnsFailures(ctx.sql, accountId, domain),
  };
}
