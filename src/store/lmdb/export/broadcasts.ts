/**
 * Broadcasts as transfer records: the record with its counters (finished/canceled messages, and
 * its statistics when any of its events was counted), the entries not expanded yet, the entries
 * that became no message and the recipients left out because suppressed. LMDB's indexes of them
 * (broadcastQueue, channelBroadcasts, broadcastMessages) are not records: the target finds the
 * same through its own (a broadcast's state, its channel, the messages' broadcastId).
 */
import type { StatCounters } from '../../../domain/stat-counters.js';
import type { BroadcastCounters, BroadcastFailure, BroadcastRecord } from '../../port/broadcasts.js';
import type { TransferRecords } from '../../port/transfer.js';
import { entriesOf, type ExportContext } from './context.js';

/** A store older than a counters database has none (read-only, it is absent): zeros. */
export function* broadcasts(c: ExportContext): Generator<TransferRecords['broadcasts']> {
  for (const { key, value } of entriesOf(c.dbs.broadcasts)) {
    const counts = c.dbs.broadcastStats?.get(key) as Omit<BroadcastCounters, 'statistics'> | undefined;
    const statistics = c.dbs.broadcastStatistics?.get([key]) as StatCounters | undefined;
    yield { record: value as BroadcastRecord, finished: counts?.finished ?? 0, canceled: counts?.canceled ?? 0, ...(statistics && { statistics }) };
  }
}

/** The broadcast's account and channel, for the rows filed under them; read once per broadcast. */
function owners(c: ExportContext): (id: string) => { accountId: string; channelId: string } {
  let last: { id: string; accountId: string; channelId: string } | undefined;
  return (id) => {
    if (last?.id !== id) {
      const b = c.dbs.broadcasts.get(id) as BroadcastRecord | undefined;
      last = { id, accountId: b?.accountId ?? '', channelId: b?.channelId ?? '' };
    }
    return last;
  };
}

export function* broadcastEntries(c: ExportContext): Generator<TransferRecords['broadcastEntries']> {
  const owner = owners(c);
  for (const { key, value } of entriesOf(c.dbs.broadcastEntries)) {
    const [broadcastId, index] = key as [string, number];
    yield { broadcastId, index, ...owner(broadcastId), entry: value };
  }
}

export function* broadcastFailures(c: ExportContext): Generator<TransferRecords['broadcastFailures']> {
  const owner = owners(c);
  for (const { key, value } of entriesOf(c.dbs.broadcastFailures)) {
    const [broadcastId] = key as [string, number];
    yield { broadcastId, ...owner(broadcastId), failure: value as BroadcastFailure };
  }
}

export function* broadcastSuppressions(c: ExportContext): Generator<TransferRecords['broadcastSuppressions']> {
  const owner = owners(c);
  for (const { key } of entriesOf(c.dbs.broadcastSuppressions)) {
    const [broadcastId, email] = key as [string, string];
    yield { broadcastId, email, ...owner(broadcastId) };
  }
}
