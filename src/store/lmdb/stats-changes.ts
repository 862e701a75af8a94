/**
 * The statistics change marks of the LMDB engine (domain/stat-changes.ts): one meta record per
 * account, 'statChanges/<accountId>', written inside the commit that changes counters a reader
 * may hold as closed (stats.ts, at the write's end with its counters; purge-queue.ts, at a
 * channel's delete). Such writes are rare, so a record per account costs nothing on the hot path.
 */
import { NO_CHANGES, withChange, type StatChanges } from '../../domain/stat-changes.js';
import { dbsOf } from './databases.js';
import type { Store } from './env.js';

const keyOf = (accountId: string): string => `statChanges/${accountId}`;

export function statChanges(store: Store, accountId: string): StatChanges {
  return (dbsOf(store).meta.get(keyOf(accountId)) as StatChanges | undefined) ?? NO_CHANGES;
}

/** Inside a write: the account's counters changed from `quarter` on (0: in every bucket). */
export function noteStatChangeInTxn(store: Store, accountId: string, quarter: number): void {
  dbsOf(store).meta.put(keyOf(accountId), withChange(statChanges(store, accountId), quarter));
}
