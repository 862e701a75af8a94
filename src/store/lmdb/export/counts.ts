/**
 * What the LMDB store holds, counted from its own databases rather than from what the export
 * streamed, so the copy's check compares two independent counts: the entries of each kind
 * (sizes, also the progress' totals) and the rows the target derives from them.
 */
import type { TransferCounts, TransferKind } from '../../port/transfer.js';
import { KEY_MAX } from '../layout.js';
import { META_KEYS, SECRET_KEYS } from './accounts.js';
import { countOf, entriesOf, type ExportContext } from './context.js';

export function sizesOf(c: ExportContext): Record<Exclude<TransferKind, 'engagementMarks'>, number> {
  const { dbs } = c;
  return {
    accounts: countOf(dbs.accounts),
    apiKeys: countOf(dbs.apiKeys),
    dashboardSessions: countOf(dbs.dashboardSessions),
    meta: META_KEYS.filter((k) => dbs.meta.doesExist(k)).length,
    secrets: SECRET_KEYS.filter((k) => dbs.meta.doesExist(k)).length,
    channels: countOf(dbs.channels),
    channelPurges: countOf(dbs.channelPurges),
    domains: countOf(dbs.domains),
    dkimKeys: countOf(dbs.dkimKeys),
    messages: countOf(dbs.messages),
    messageBodies: countOf(dbs.bodies),
    unfinishedMessages: countOf(dbs.unsigned),
    clientMessageIds: countOf(dbs.clientMessageIds),
    sendQuota: countOf(dbs.counters, { start: ['sent'], end: ['sent', KEY_MAX] }),
    jobs: countOf(dbs.jobs),
    broadcasts: countOf(dbs.broadcasts),
    broadcastEntries: countOf(dbs.broadcastEntries),
    broadcastFailures: countOf(dbs.broadcastFailures),
    broadcastSuppressions: countOf(dbs.broadcastSuppressions),
    suppressions: countOf(dbs.suppressions),
    webhooks: countOf(dbs.webhooks),
    webhookOutbox: countOf(dbs.webhookOutbox),
    inboundRoutes: countOf(dbs.inboundRoutes),
    templates: countOf(dbs.templates),
    templateVersions: countOf(dbs.templateVersions),
    inboundMessages: countOf(dbs.inboundMessages),
    inboundDailyCounts: countOf(dbs.inboundMessageIndex, { start: ['n'], end: ['n', KEY_MAX] }),
    idempotency: countOf(dbs.idempotency),
    tlsRptCounts: countOf(dbs.tlsRpt, { start: ['c'], end: ['c', KEY_MAX] }),
    tlsRptReports: countOf(dbs.tlsRpt, { start: ['r'], end: ['r', KEY_MAX] }),
    mtaStsPolicies: countOf(dbs.mtaStsPolicies),
    dnsFailures: countOf(dbs.dnsFailures),
    retentionPending: countOf(dbs.retentionPending),
    statCounters: countOf(dbs.statsDaily) + countOf(dbs.statsDailyTags) + countOf(dbs.statsQuarter) + countOf(dbs.statsQuarterTags),
    events: countOf(dbs.events),
    eventClock: countOf(dbs.eventClock),
    messageQueue: countOf(dbs.messageQueue),
    eventLog: 1,
  };
}

/** After the export: the sizes, the marks it gathered, and the rows derived on the target's side. */
export function countsOf(c: ExportContext): TransferCounts {
  const { eventLog: _head, ...sizes } = sizesOf(c);
  const { dbs } = c;
  return {
    ...sizes,
    engagementMarks: c.derived.engagementMarks,
    eventTerms: eventTermEntries(c),
    broadcastCounters: sizes.broadcasts,
    broadcastStatistics: countOf(dbs.broadcastStatistics),
    webhookStatus: sizes.webhooks,
    tlsRptFailures: tlsRptFailureEntries(c),
    eventLastSeq: (dbs.meta.get('eventSeq') as number | undefined) ?? 0,
  };
}

/**
 * LMDB's eventIndex entries by recipient ('r') and tag ('t'): one target row each (event_terms).
 * Per account the two kinds are adjacent in key order (a, c, e, m, r, t), so each account is one
 * counted range, found by a skip-scan over the accounts that have events.
 */
function eventTermEntries(c: ExportContext): number {
  const index = c.dbs.eventIndex;
  let n = 0;
  let start: string[] | undefined;
  for (;;) {
    let account: string | undefined;
    for (const key of entriesOf(index, { start, limit: 1 })) account = (key.key as [string])[0];
    if (account === undefined) return n;
    n += countOf(index, { start: [account, 'r'], end: [account, 't', KEY_MAX] });
    start = [account, KEY_MAX];
  }
}

function tlsRptFailureEntries(c: ExportContext): number {
  let n = 0;
  for (const { value } of entriesOf(c.dbs.tlsRpt, { start: ['c'], end: ['c', KEY_MAX] })) n += (value as { failures: unknown[] }).failures.length;
  return n;
}
