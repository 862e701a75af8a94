/**
 * Migration 6 (issue 36): the statistics change marks, one row per account (domain/stat-changes.ts,
 * stats-changes.ts): what a node that keeps the sums of closed buckets must forget. Written only
 * by the rare commits that change counters of a quarter hour that has ended, and by a channel's
 * delete; read once per statistics series.
 */
export const SQL = `
CREATE TABLE stat_changes (
  account_id text PRIMARY KEY,
  epoch int8 NOT NULL,
  -- The earliest quarter hour each of the last changes touched, oldest first (at most 64).
  quarters int8[] NOT NULL
);
`;
