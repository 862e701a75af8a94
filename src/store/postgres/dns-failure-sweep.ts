/**
 * Retention's sweep of hard DNS failures (RetentionPort.sweepDnsFailures): one short transaction
 * over at most `batch` entries after `after`, in primary key order (account, domain; COLLATE "C":
 * LMDB's key order). Failures older than the window no longer count (countDnsFailure drops them
 * too, but only when the domain fails again), so they go, and an entry left with none goes too.
 */
import { DNS_FAILURE_WINDOW_MS } from '../../domain/dns-failure-rule.js';
import type { DnsFailureKey, DnsFailureSweep } from '../port/retention.js';
import type { PgContext } from './context.js';

/**
 * The page is locked (FOR UPDATE) before it is changed, so a failure counted on another node
 * meanwhile waits and then appends to what the sweep left (or inserts anew after a delete).
 */
export async function sweepDnsFailures(ctx: PgContext, o: { nowMs: number; batch: number; after?: DnsFailureKey }): Promise<DnsFailureSweep> {
  const since = o.nowMs - DNS_FAILURE_WINDOW_MS;
  return ctx.begin(async (tx) => {
    const page = await tx<{ account_id: string; domain: string }[]>`
      SELECT account_id, domain FROM dns_failures
      ${o.after ? tx`WHERE (account_id, domain) > (${o.after[0]}, ${o.after[1]})` : tx``}
      ORDER BY account_id, domain LIMIT ${o.batch + 1} FOR UPDATE`;
    const mine = page.slice(0, o.batch);
    if (mine.length === 0) return { removed: 0 };
    const accounts = mine.map((r) => r.account_id);
    const domains = mine.map((r) => r.domain);
    const gone = await tx`
      DELETE FROM dns_failures d USING unnest(${accounts}::text[], ${domains}::text[]) AS k(a, n)
      WHERE d.account_id = k.a AND d.domain = k.n AND NOT EXISTS (SELECT 1 FROM unnest(d.times) t WHERE t > ${since}::int8)`;
    await tx`
      UPDATE dns_failures d SET times = (SELECT array_agg(t ORDER BY i) FROM unnest(d.times) WITH ORDINALITY AS u(t, i) WHERE t > ${since}::int8)
      FROM unnest(${accounts}::text[], ${domains}::text[]) AS k(a, n)
      WHERE d.account_id = k.a AND d.domain = k.n AND EXISTS (SELECT 1 FROM unnest(d.times) t WHERE t <= ${since}::int8)`;
    const last = mine[mine.length - 1];
    return page.length > o.batch ? { removed: gone.count, next: [last.account_id, last.domain] } : { removed: gone.count };
  });
}
