/**
 * What the PostgreSQL schema holds, counted by PostgreSQL (COUNT(*) per table), under the names
 * of the copy's check (store/port/transfer.ts TransferCounts), and whether any of it holds data.
 */
import type { TransferCountName, TransferCounts } from '../../port/transfer.js';
import type { Db } from '../client.js';

/** The tables each name counts; table names are constants of this file, never input. */
const TABLES: Record<Exclude<TransferCountName, 'eventLastSeq'>, readonly string[]> = {
  accounts: ['accounts'],
  apiKeys: ['api_keys'],
  dashboardSessions: ['dashboard_sessions'],
  meta: ['meta'],
  secrets: ['secrets'],
  channels: ['channels'],
  channelPurges: ['channel_purges'],
  domains: ['domains'],
  dkimKeys: ['dkim_keys'],
  messages: ['messages'],
  messageBodies: ['message_bodies'],
  unfinishedMessages: ['unfinished_messages'],
  clientMessageIds: ['client_message_ids'],
  sendQuota: ['send_quota'],
  jobs: ['jobs', 'finished_jobs'],
  broadcasts: ['broadcasts'],
  broadcastEntries: ['broadcast_entries'],
  broadcastFailures: ['broadcast_failures'],
  broadcastSuppressions: ['broadcast_suppressions'],
  broadcastCounters: ['broadcast_counters'],
  broadcastStatistics: ['broadcast_statistics'],
  events: ['events'],
  eventTerms: ['event_terms'],
  eventClock: ['event_clock'],
  messageQueue: ['message_queue'],
  statCounters: ['stat_counters'],
  suppressions: ['suppressions'],
  engagementMarks: ['engagement_report_marks'],
  webhooks: ['webhooks'],
  webhookStatus: ['webhook_status'],
  webhookOutbox: ['webhook_outbox'],
  inboundRoutes: ['inbound_routes'],
  templates: ['templates'],
  templateVersions: ['template_versions'],
  inboundMessages: ['inbound_messages'],
  inboundDailyCounts: ['inbound_daily_counts'],
  idempotency: ['idempotency_records'],
  tlsRptCounts: ['tls_rpt_counts'],
  tlsRptFailures: ['tls_rpt_failures'],
  tlsRptReports: ['tls_rpt_reports'],
  mtaStsPolicies: ['mta_sts_policies'],
  dnsFailures: ['dns_failures'],
  retentionPending: ['retention_pending'],
};

/** Every name counted in one statement (one snapshot). */
export async function countRows(db: Db): Promise<TransferCounts> {
  const names = Object.keys(TABLES) as (keyof typeof TABLES)[];
  const columns = names.map((n) => `(${TABLES[n].map((t) => `(SELECT count(*) FROM ${t})`).join(' + ')})::int8 AS "${n}"`);
  const [row] = await db.unsafe<Record<string, number>[]>(`SELECT ${columns.join(', ')}, (SELECT last FROM event_log_head) AS "eventLastSeq"`);
  return row as TransferCounts;
}

/** The tables that hold a row already, and the event log's head when it has given out seqs. */
export async function tablesWithData(db: Db): Promise<string[]> {
  const tables = [...new Set(Object.values(TABLES).flat())];
  const columns = tables.map((t) => `EXISTS (SELECT 1 FROM ${t}) AS "${t}"`);
  const [row] = await db.unsafe<Record<string, boolean>[]>(`SELECT ${columns.join(', ')}, (SELECT last > 0 FROM event_log_head) AS "event_log_head"`);
  return Object.entries(row).filter(([, has]) => has).map(([t]) => t);
}
