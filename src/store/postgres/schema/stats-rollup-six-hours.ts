/**
 * Migration 7 (issue 36): the rollup's six-hour level ('s', records starting at 00:00, 06:00,
 * 12:00 and 18:00 UTC), between the hour and the day. A zone's day edge reads the finer records
 * between it and the nearest UTC midnight (domain/stat-levels.ts); with hours alone that was up
 * to 12 hours and 2 quarter hours per edge (Pacific/Auckland), with six hours it is at most 2
 * six hours, 3 hours and 2 quarter hours in any zone (Asia/Kolkata: 3 records instead of 7).
 *
 * Filled from the hour records already there (the hours were made from the quarter hours, as the
 * six hours are from now on: stats-rollup.ts), and read by the phase of a record in the UTC day
 * through an index of its own: stat_rollup_phase's expression (migration 5) gives every six-hour
 * record phase 0, and a released migration is not changed. Partial, so it holds six-hour records
 * only; like stat_rollup_phase it indexes key columns alone, so counter upserts stay HOT.
 */
export const SQL = `
ALTER TABLE stat_rollup DROP CONSTRAINT stat_rollup_grain_check;
ALTER TABLE stat_rollup ADD CONSTRAINT stat_rollup_grain_check CHECK (grain IN ('q', 'h', 's', 'd'));

INSERT INTO stat_rollup (account_id, channel_id, grain, bucket, mail_type, sent, delivered, opened, clicked, bounced, unsubscribed, complained)
SELECT account_id, channel_id, 's', floor(bucket::numeric / 6)::int8, mail_type,
  sum(sent), sum(delivered), sum(opened), sum(clicked), sum(bounced), sum(unsubscribed), sum(complained)
FROM stat_rollup
WHERE grain = 'h'
GROUP BY 1, 2, 3, 4, 5;

CREATE INDEX stat_rollup_phase_six ON stat_rollup (account_id, channel_id, ((bucket * 24) % 96), bucket) WHERE grain = 's';
`;
