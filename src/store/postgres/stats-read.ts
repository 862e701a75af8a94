/**
 * Reading the statistics counters (stat_counters, written by appendEvents): the sums per bucket
 * and mail type over a range of buckets of one grain, for an account's scope. A read never walks
 * events: its cost grows with buckets × active channels (× tag sets), each an index range of the
 * primary key (account_id, grain, tag, bucket, ...).
 *
 * Tags: an event is counted under each of its tags with its whole tag set, so a query for tags
 * A, B reads A's rows, then B's rows skipping those whose set also holds A (an event carrying
 * both counts once) — the LMDB engine's rule (store/lmdb/stats.ts walkCounters).
 * Channels being purged after their delete count no more (store/port/events.ts), as every
 * account-wide read skips them (channel_purges, the channels group's table).
 */
import type { StatCounters } from '../../domain/stat-counters.js';
import type { MailType } from '../../domain/types.js';
import type { CounterScope } from '../port/events.js';
import type { Db } from './client.js';

export interface BucketSum {
  bucket: number;
  mailType: MailType;
  value: StatCounters;
}

type SumRow = StatCounters & { bucket: number; mail_type: MailType };

/** Inclusive bucket ranges, disjoint. */
export interface BucketRange {
  from: number;
  to: number;
}

/**
 * The sums per (bucket, mail type) of the buckets of one grain inside `ranges`, in bucket order:
 * one statement, one primary-key range scan per (tag, range). Without tags the tag list is ['']
 * (the untagged totals), whose "earlier tags" are none.
 */
export async function bucketSums(db: Db, grain: 'd' | 'q', q: CounterScope, ranges: readonly BucketRange[]): Promise<BucketSum[]> {
  const wanted = ranges.filter((r) => r.to >= r.from);
  if (wanted.length === 0) return [];
  const tags = q.tags && q.tags.length > 0 ? [...new Set(q.tags)] : [''];
  const channels = q.channelIds ? db`AND s.channel_id = ANY(${q.channelIds}::text[])` : db``;
  const rows = await db<SumRow[]>`
    SELECT s.bucket, s.mail_type, sum(s.sent)::int8 AS sent, sum(s.delivered)::int8 AS delivered,
      sum(s.opened)::int8 AS opened, sum(s.clicked)::int8 AS clicked, sum(s.bounced)::int8 AS bounced,
      sum(s.unsubscribed)::int8 AS unsubscribed, sum(s.complained)::int8 AS complained
    FROM unnest(${tags}::text[]) WITH ORDINALITY AS t(tag, i)
    CROSS JOIN unnest(${wanted.map((r) => r.from)}::int8[], ${wanted.map((r) => r.to)}::int8[]) AS r(lo, hi)
    CROSS JOIN LATERAL (
      SELECT * FROM stat_counters s
      WHERE s.account_id = ${q.accountId} AND s.grain = ${grain}::"char" AND s.tag = t.tag AND s.bucket BETWEEN r.lo AND r.hi
      -- OFFSET 0 keeps this a subquery run per (tag, range), one primary-key range scan each: flattened into
      -- a join, the planner may scan every bucket of the tag and filter it against every range (a year of
      -- Kolkata days, 367 ranges of quarter hours, then ran past the 30 s statement timeout).
      OFFSET 0
    ) s
    WHERE NOT (s.tag_set && (${tags}::text[])[1:t.i::int4 - 1]) ${channels}
      AND NOT EXISTS (SELECT 1 FROM channel_purges p WHERE p.channel_id = s.channel_id)
    GROUP BY s.bucket, s.mail_type ORDER BY s.bucket, s.mail_type`;
  return rows.map(({ bucket, mail_type, ...value }) => ({ bucket, mailType: mail_type, value }));
}
