/**
 * Hard DNS failures of a recipient domain per account (the rule: domain/dns-failure-rule.ts):
 * one failure counted is one upsert of the (account, domain) row, so concurrent outcomes on any
 * node each count: the conflicting INSERT waits for the row lock of the other and then updates
 * the committed times (READ COMMITTED re-reads the row under ON CONFLICT DO UPDATE).
 */
import { DNS_FAILURE_SUPPRESS_AFTER, DNS_FAILURE_WINDOW_MS } from '../../domain/dns-failure-rule.js';
import type { Db } from './client.js';

export interface DnsFailureInput {
  accountId: string;
  domain: string;
  atMs: number;
}

/**
 * Counts one failure at atMs and says whether the domain has now failed DNS_FAILURE_SUPPRESS_AFTER
 * times within the window. As LMDB: failures older than the window are dropped, the new one
 * appended, the last DNS_FAILURE_SUPPRESS_AFTER kept, in the order they were counted.
 */
export async function countDnsFailure(db: Db, o: DnsFailureInput): Promise<boolean> {
  const since = o.atMs - DNS_FAILURE_WINDOW_MS;
  const [row] = await db<{ n: number }[]>`
    INSERT INTO dns_failures AS d (account_id, domain, times)
    VALUES (${o.accountId}, ${o.domain.toLowerCase()}, ARRAY[${o.atMs}::int8])
    ON CONFLICT (account_id, domain) DO UPDATE SET times = (
      SELECT coalesce(array_agg(t ORDER BY i), '{}'::int8[]) FROM (
        SELECT t, i FROM unnest(d.times || ${o.atMs}::int8) WITH ORDINALITY AS u(t, i)
        WHERE t > ${since}::int8 ORDER BY i DESC LIMIT ${DNS_FAILURE_SUPPRESS_AFTER}
      ) kept)
    RETURNING cardinality(times) AS n`;
  return row.n >= DNS_FAILURE_SUPPRESS_AFTER;
}

/** The recent failures (ms) of the account's recipient domain, oldest first. */
export async function recentDnsFailures(db: Db, accountId: string, domain: string): Promise<number[]> {
  const [row] = await db<{ times: number[] }[]>`
    SELECT times FROM dns_failures WHERE account_id = ${accountId} AND domain = ${domain.toLowerCase()}`;
  return row ? row.times.map(Number) : [];
}
