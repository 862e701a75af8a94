/**
 * Migration 4 (issue 36): stat_rollup, the untagged statistics counters again per UTC quarter
 * hour ('q'), hour ('h') and day ('d'), per channel and for the whole account (channel_id ''),
 * so a series reads a few hundred rows instead of one per quarter hour, channel and mail type
 * (domain/stat-levels.ts, stats-rollup.ts). The channel '' rows of a bucket are the sum of its
 * channel rows; a channel's purge keeps that (channel-purge-rollup.ts).
 *
 * Filled from the counters already there, as they read today: 'q' and 'h' from the quarter-hour
 * rows, 'd' from the day rows (which also hold the counters older than the quarter hours).
 */
export const SQL = `
CREATE TABLE stat_rollup (
  account_id text COLLATE "C" NOT NULL,
  channel_id text COLLATE "C" NOT NULL,
  grain "char" NOT NULL CHECK (grain IN ('q', 'h', 'd')),
  bucket int8 NOT NULL,
  mail_type text COLLATE "C" NOT NULL,
  sent int8 NOT NULL,
  delivered int8 NOT NULL,
  opened int8 NOT NULL,
  clicked int8 NOT NULL,
  bounced int8 NOT NULL,
  unsubscribed int8 NOT NULL,
  complained int8 NOT NULL,
  PRIMARY KEY (account_id, channel_id, grain, bucket, mail_type)
);
CREATE INDEX stat_rollup_channel ON stat_rollup (channel_id);

INSERT INTO stat_rollup (account_id, channel_id, grain, bucket, mail_type, sent, delivered, opened, clicked, bounced, unsubscribed, complained)
SELECT s.account_id, c.channel_id, l.grain, floor(s.bucket::numeric / l.quarters)::int8, s.mail_type,
  sum(s.sent), sum(s.delivered), sum(s.opened), sum(s.clicked), sum(s.bounced), sum(s.unsubscribed), sum(s.complained)
FROM stat_counters s
JOIN (VALUES ('q'::"char", 'q'::"char", 1), ('h', 'q', 4), ('d', 'd', 1)) AS l(grain, source, quarters) ON l.source = s.grain
CROSS JOIN LATERAL (VALUES (s.channel_id), ('')) AS c(channel_id)
WHERE s.tag = ''
GROUP BY 1, 2, 3, 4, 5;
`;
