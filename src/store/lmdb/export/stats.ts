/**
 * The statistics counters as transfer records, copied as they are rather than counted again from
 * the events: counters outlive the events retention removes (store/lmdb/stats.ts), so a count
 * from the log left would lose every day retention has reached.
 *
 * LMDB keeps four databases (day and quarter hour, each untagged and per tag with the event's tag
 * set as JSON); a record names its grain, its tag ('' untagged) and its tag set ([] untagged).
 */
import { zeroCounters, type StatCounters } from '../../../domain/stat-counters.js';
import type { MailType } from '../../../domain/types.js';
import type { TransferStatCounter } from '../../port/transfer.js';
import { entriesOf, type ExportContext } from './context.js';

type Untagged = [string, number, string, MailType];
type Tagged = [string, string, number, string, MailType, string];

export function* statCounters(c: ExportContext): Generator<TransferStatCounter> {
  for (const [db, grain] of [[c.dbs.statsDaily, 'd'], [c.dbs.statsQuarter, 'q']] as const) {
    for (const { key, value } of entriesOf(db)) {
      const [accountId, bucket, channelId, mailType] = key as Untagged;
      yield { accountId, grain, tag: '', bucket, channelId, mailType, tagSet: [], counters: countersOf(value) };
    }
  }
  for (const [db, grain] of [[c.dbs.statsDailyTags, 'd'], [c.dbs.statsQuarterTags, 'q']] as const) {
    for (const { key, value } of entriesOf(db)) {
      const [accountId, tag, bucket, channelId, mailType, set] = key as Tagged;
      yield { accountId, grain, tag, bucket, channelId, mailType, tagSet: JSON.parse(set) as string[], counters: countersOf(value) };
    }
  }
}

/** Every counter present (a record written before a counter existed lacks it). */
function countersOf(value: unknown): StatCounters {
  return { ...zeroCounters(), ...(value as Partial<StatCounters>) };
}
