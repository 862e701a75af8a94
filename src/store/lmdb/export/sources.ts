/**
 * Which records each transfer kind is read from, in the order a copy writes them: the owners of
 * things before the things (accounts, channels, messages), the event log after the messages,
 * and its head (eventLog) last, so that a target that was stopped half way never claims a log
 * it does not hold.
 */
import type { TransferKind, TransferRecords } from '../../port/transfer.js';
import { accounts, apiKeys, dashboardSessions, meta, secrets } from './accounts.js';
import { broadcastEntries, broadcastFailures, broadcasts, broadcastSuppressions } from './broadcasts.js';
import { channelPurges, channels, dkimKeys, domains } from './channels.js';
import type { ExportContext } from './context.js';
import { dnsFailures, idempotency, mtaStsPolicies, suppressions, tlsRptCounts, tlsRptReports } from './delivery-state.js';
import { engagementMarks, eventClock, eventLog, events, messageQueue } from './events.js';
import { jobs } from './jobs.js';
import { clientMessageIds, messageBodies, messages, retentionPending, sendQuota, unfinishedMessages } from './messages.js';
import { statCounters } from './stats.js';
import { inboundDailyCounts, inboundMessages } from './inbound.js';
import { inboundRoutes, webhookOutbox, webhooks } from './webhooks.js';
import { templates, templateVersions } from './templates.js';

export type Sources = { [K in TransferKind]: (c: ExportContext) => Iterable<TransferRecords[K]> };

/** A new set per export: the engagement marks are gathered while the events are read. */
export function sources(): Sources {
  const marks = new Map<string, TransferRecords['engagementMarks']>();
  return {
    accounts,
    apiKeys,
    dashboardSessions,
    meta,
    secrets,
    channels,
    channelPurges,
    domains,
    dkimKeys,
    messages,
    messageBodies,
    unfinishedMessages,
    clientMessageIds,
    sendQuota,
    jobs,
    broadcasts,
    broadcastEntries,
    broadcastFailures,
    broadcastSuppressions,
    suppressions,
    webhooks,
    webhookOutbox,
    inboundRoutes,
    templates,
    templateVersions,
    inboundMessages,
    inboundDailyCounts,
    idempotency,
    tlsRptCounts,
    tlsRptReports,
    mtaStsPolicies,
    dnsFailures,
    retentionPending,
    statCounters,
    events: events(marks),
    engagementMarks: engagementMarks(marks),
    eventClock,
    messageQueue,
    eventLog,
  };
}
