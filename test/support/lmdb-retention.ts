/**
 * What retention does and leaves in the LMDB engine, for the engine fixtures
 * (support/engine-fixtures.ts): one message removed as a sweep removes it, and the index entries
 * a sweep must not leave behind. No port verb removes a single message or lists raw index
 * entries, so these read and write the engine's databases.
 */
import { dbsOf } from '../../src/store/lmdb/databases.js';
import type { LmdbStore } from '../../src/store/lmdb/engine.js';
import { indexedEventSeqs, messageJobLinks } from '../../src/store/lmdb/remains.js';
import { purgeMessageInTxn } from '../../src/store/lmdb/retention.js';

/** The message leaves the store as retention removes a finished one: record, body, done jobs, index links. */
export async function purgeMessage(store: LmdbStore, messageId: string): Promise<void> {
  await store.write(() => purgeMessageInTxn(store, messageId));
}

/**
 * The message parked as retention parked a queued message whose accepted event it removed, before
 * it kept unfinished messages whole: a store written then still holds such entries.
 */
export async function parkAsBefore(store: LmdbStore, messageId: string, createdMs: number): Promise<void> {
  await store.write(() => dbsOf(store).retentionPending.put(messageId, createdMs));
}

/** The entries of the event indexes (eventIndex, messageEvents) that still name one of `seqs`. */
export function eventIndexEntriesOf(store: LmdbStore, seqs: ReadonlySet<number>): string[] {
  const indexed = indexedEventSeqs(store);
  return [
    ...indexed.eventIndex.filter((seq) => seqs.has(seq)).map((seq) => `eventIndex: ${seq}`),
    ...indexed.messageEvents.filter((seq) => seqs.has(seq)).map((seq) => `messageEvents: ${seq}`),
  ];
}

/** Every [messageId, jobId] link of the messageJobs index. */
export function jobLinks(store: LmdbStore): [string, string][] {
  return messageJobLinks(store);
}
