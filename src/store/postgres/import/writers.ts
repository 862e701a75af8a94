/** The writer of each transfer kind: one call per batch, inside the batch's transaction. */
import type { TransferKind, TransferRecords } from '../../port/transfer.js';
import type { Tx } from '../client.js';
import { writeAccounts, writeApiKeys, writeMeta, writeSecrets, writeSessions } from './accounts.js';
import { writeBroadcasts, writeEntries, writeFailures, writeSuppressed } from './broadcasts.js';
import { writeChannelPurges, writeChannels, writeDkimKeys, writeDomains } from './channels.js';
import { writeDnsFailures, writeIdempotency, writeMtaSts, writeSuppressions, writeTlsRptCounts, writeTlsRptReports } from './delivery-state.js';
import { writeEventClock, writeEventLog, writeEvents, writeMarks, writeMessageQueue } from './events.js';
import { writeJobs } from './jobs.js';
import { writeBodies, writeClientIds, writeMessages, writeRetentionPending, writeSendQuota, writeUnfinished } from './messages.js';
import { writeStatCounters } from './stats.js';
import { writeInboundDailyCounts, writeInboundMessages } from './inbound.js';
import { writeInboundRoutes, writeOutbox, writeWebhooks } from './webhooks.js';
import { writeTemplates, writeTemplateVersions } from './templates.js';

export type Writers = { [K in TransferKind]: (tx: Tx, records: TransferRecords[K][]) => Promise<void> };

export const WRITERS: Writers = {
  accounts: writeAccounts,
  apiKeys: writeApiKeys,
  dashboardSessions: writeSessions,
  meta: writeMeta,
  secrets: writeSecrets,
  channels: writeChannels,
  channelPurges: writeChannelPurges,
  domains: writeDomains,
  dkimKeys: writeDkimKeys,
  messages: writeMessages,
  messageBodies: writeBodies,
  unfinishedMessages: writeUnfinished,
  clientMessageIds: writeClientIds,
  sendQuota: writeSendQuota,
  jobs: writeJobs,
  broadcasts: writeBroadcasts,
  broadcastEntries: writeEntries,
  broadcastFailures: writeFailures,
  broadcastSuppressions: writeSuppressed,
  events: writeEvents,
  eventClock: writeEventClock,
  messageQueue: writeMessageQueue,
  statCounters: writeStatCounters,
  suppressions: writeSuppressions,
  engagementMarks: writeMarks,
  webhooks: writeWebhooks,
  webhookOutbox: writeOutbox,
  inboundRoutes: writeInboundRoutes,
  templates: writeTemplates,
  templateVersions: writeTemplateVersions,
  inboundMessages: writeInboundMessages,
  inboundDailyCounts: writeInboundDailyCounts,
  idempotency: writeIdempotency,
  tlsRptCounts: writeTlsRptCounts,
  tlsRptReports: writeTlsRptReports,
  mtaStsPolicies: writeMtaSts,
  dnsFailures: writeDnsFailures,
  retentionPending: writeRetentionPending,
  eventLog: writeEventLog,
};
