/**
 * Migration 5 (issue 36): stat_rollup by the phase of a record in the UTC day (the quarter hour it
 * starts at), so the finer records at a zone's edges, which sit at the same times of every day,
 * are read in one index range per phase instead of one per edge (domain/stat-phases.ts,
 * stats-rollup-read.ts: a year of Asia/Kolkata days, 7 descents per channel instead of 732).
 *
 * The expression is the one stats-rollup-read.ts writes (a test checks the statement uses this
 * index). Only key columns are indexed: the upsert that adds to a record's counters changes none
 * of them, so it stays a HOT update; a new record adds one entry, as it does to the primary key.
 */
export const SQL = `
CREATE INDEX stat_rollup_phase ON stat_rollup (account_id, channel_id, grain, ((bucket * CASE grain WHEN 'q' THEN 1 WHEN 'h' THEN 4 ELSE 96 END) % 96), bucket);
`;
