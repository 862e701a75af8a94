/**
 * The tables of the delivery-state aggregates (part of migration 1, schema/index.ts): suppressions,
 * the engagement report marks, TLS-RPT counts and reports, the MTA-STS policy cache, hard DNS
 * failures and retention's parked messages. Until the first release every table is created here;
 * afterwards a change is a new migration.
 *
 * Ids, and text that the LMDB engine orders by key (addresses, days, domains, policy keys), are
 * COLLATE "C", as every group's: byte order, as LMDB's keys sort, whatever the locale.
 */
export const SQL = `
-- SuppressionsPort: unique per (channel, mail type, lower-cased address) (store/port/suppressions.ts).
-- The primary key is both the insert-if-absent rule and the index of the per-recipient check and
-- of a channel's list in (mail type, address) order. No account_id: apply() names a channel only;
-- a channel's purge deletes by channel_id (the primary key's prefix).
CREATE TABLE suppressions (
  channel_id text COLLATE "C" NOT NULL,
  mail_type text COLLATE "C" NOT NULL,
  email text COLLATE "C" NOT NULL,
  reason text NOT NULL,
  doc jsonb NOT NULL,
  PRIMARY KEY (channel_id, mail_type, email)
);

-- EngagementPort: a bounce report or complaint recorded for a message and recipient (lower-cased).
-- The primary key makes "at most one per message and recipient" an INSERT ... ON CONFLICT DO
-- NOTHING. at_ms is the event's time: retention drops marks whose events have aged out.
CREATE TABLE engagement_report_marks (
  message_id text COLLATE "C" NOT NULL,
  event_type text NOT NULL,
  recipient text NOT NULL,
  account_id text COLLATE "C" NOT NULL,
  channel_id text COLLATE "C" NOT NULL,
  at_ms int8 NOT NULL,
  PRIMARY KEY (message_id, event_type, recipient)
);
CREATE INDEX engagement_report_marks_channel ON engagement_report_marks (channel_id);
CREATE INDEX engagement_report_marks_at ON engagement_report_marks (at_ms);

-- TlsRptPort: counts per UTC day, policy domain and policy (domain/tls-rpt-keys.ts policyKey),
-- summed by upserts; each failure detail apart, in the order first seen (ord).
CREATE TABLE tls_rpt_counts (
  day text COLLATE "C" NOT NULL,
  policy_domain text COLLATE "C" NOT NULL,
  policy_key text COLLATE "C" NOT NULL,
  policy jsonb NOT NULL,
  success int8 NOT NULL,
  PRIMARY KEY (day, policy_domain, policy_key)
);
CREATE TABLE tls_rpt_failures (
  day text COLLATE "C" NOT NULL,
  policy_domain text COLLATE "C" NOT NULL,
  policy_key text COLLATE "C" NOT NULL,
  failure_key text COLLATE "C" NOT NULL,
  failure jsonb NOT NULL,
  count int8 NOT NULL,
  ord bigserial NOT NULL,
  PRIMARY KEY (day, policy_domain, policy_key, failure_key)
);
-- A day's report per policy domain: the primary key is createReport's insert-if-absent.
CREATE TABLE tls_rpt_reports (
  day text COLLATE "C" NOT NULL,
  policy_domain text COLLATE "C" NOT NULL,
  report_id text NOT NULL,
  gzip bytea NOT NULL,
  pending text[] NOT NULL,
  attempts int4 NOT NULL,
  next_at_ms int8 NOT NULL,
  PRIMARY KEY (day, policy_domain)
);
-- dueReports: only reports with URIs pending, by their next attempt.
CREATE INDEX tls_rpt_reports_due ON tls_rpt_reports (next_at_ms) WHERE cardinality(pending) > 0;

-- MtaStsPort: the last policy fetched per recipient domain (lower case).
CREATE TABLE mta_sts_policies (
  domain text PRIMARY KEY,
  doc jsonb NOT NULL
);

-- DnsFailuresPort: the recent hard DNS failures (ms, oldest first) per account and recipient
-- domain (lower case). countFailure is one upsert; the sweep walks the primary key in order.
CREATE TABLE dns_failures (
  account_id text COLLATE "C" NOT NULL,
  domain text COLLATE "C" NOT NULL,
  times int8[] NOT NULL,
  PRIMARY KEY (account_id, domain)
);

-- RetentionPort: messages whose accepted event is gone while their delivery went on; a later
-- sweep removes them once their last job is done.
CREATE TABLE retention_pending (
  message_id text COLLATE "C" PRIMARY KEY,
  account_id text COLLATE "C" NOT NULL,
  channel_id text COLLATE "C" NOT NULL,
  created_ms int8 NOT NULL
);
CREATE INDEX retention_pending_channel ON retention_pending (channel_id);
`;
