/**
 * Fixtures for the states a test needs that the store port cannot create or inspect: a history
 * of synthetic events (the port has no append verb), the whole event log read directly, one
 * message removed as retention removes it, the index entries a sweep must not leave behind,
 * records as an older version wrote them. Each takes a StorePort and hands it to its engine's
 * implementation (raw engine code lives in support/lmdb-*.ts); a store of an engine with none
 * fails with "no fixture for this engine".
 *
 * This is the one file a second engine (PostgreSQL, cluster mode) adds its fixtures to: a
 * branch per fixture beside the LMDB one. Tests import these, never support/lmdb-*.ts.
 */
import type { EventRecord } from '../../src/domain/types.js';
import { LmdbStore } from '../../src/store/lmdb/engine.js';
import { PostgresStore } from '../../src/store/postgres/engine.js';
import type { StorePort } from '../../src/store/port/index.js';
import { dropRsaCompanion as lmdbDropRsaCompanion } from './lmdb-domains.js';
import { appendEvents, eventLog } from './lmdb-events.js';
import { putBroadcastAsOlderVersion as lmdbPutBroadcastAsOlderVersion } from './lmdb-older-store.js';
import { eventIndexEntriesOf, jobLinks, purgeMessage } from './lmdb-retention.js';
import { pgDropRsaCompanion } from './pg-domains.js';
import { pgDanglingIndexEntries, pgEventLog, pgSeedEvents } from './pg-events.js';
import { pgForgetMessage, pgPutBroadcastAsOlderVersion } from './pg-messages.js';
import { pgMessageJobLinks } from './pg-queue.js';
import { TEST_STORE_ENGINE } from './store.js';

/** An event as a test writes it: everything but the seq, which the store gives. */
export type EventDraft = Omit<EventRecord, 'seq'>;

export interface SeedOptions {
  /** Drafts per commit (default 200). */
  batch?: number;
  /** The accepted events among the drafts stand for messages still queued for delivery. */
  queued?: boolean;
}

function noFixture(fixture: string, store: StorePort): never {
  throw new Error(`no ${fixture} fixture for this engine (${store.constructor.name}): add one to test/support/engine-fixtures.ts`);
}

/**
 * Appends the drafts to the store's event log in order, through the engine's one real event
 * writer (so its indexes and statistics counters are kept as a real append keeps them); returns
 * them as stored, with their seqs.
 */
export async function seedEvents(store: StorePort, drafts: readonly EventDraft[], o: SeedOptions = {}): Promise<EventRecord[]> {
  if (store instanceof LmdbStore) return appendEvents(store, drafts, o);
  if (store instanceof PostgresStore) return pgSeedEvents(store, drafts, o);
  return noFixture('seedEvents', store);
}

/** The whole event log, every account's, in seq order, read from the log itself (not its indexes). */
export async function allEvents(store: StorePort): Promise<EventRecord[]> {
  if (store instanceof LmdbStore) return eventLog(store);
  if (store instanceof PostgresStore) return pgEventLog(store);
  return noFixture('allEvents', store);
}

/**
 * What retention does to one finished message, without its events: its record, body, finished
 * jobs and their links leave the store (the message's accepted event stays).
 */
export async function forgetMessage(store: StorePort, messageId: string): Promise<void> {
  if (store instanceof LmdbStore) return purgeMessage(store, messageId);
  if (store instanceof PostgresStore) return pgForgetMessage(store, messageId);
  return noFixture('forgetMessage', store);
}

/**
 * The entries of the store's event indexes (by filter, by message) that still name one of the
 * removed events `removedSeqs`, each described in a line: none may be left after a sweep.
 */
export async function danglingIndexEntries(store: StorePort, removedSeqs: Iterable<number>): Promise<string[]> {
  if (store instanceof LmdbStore) return eventIndexEntriesOf(store, new Set(removedSeqs));
  if (store instanceof PostgresStore) return pgDanglingIndexEntries(store, removedSeqs);
  return noFixture('danglingIndexEntries', store);
}

/** Every [messageId, jobId] link the store keeps from a message to its delivery jobs, whether or not either still exists. */
export async function messageJobLinks(store: StorePort): Promise<[string, string][]> {
  if (store instanceof LmdbStore) return jobLinks(store);
  if (store instanceof PostgresStore) return pgMessageJobLinks(store);
  return noFixture('messageJobLinks', store);
}

/**
 * The domain as a store written before dual signing holds it (RFC 8463 3, issue 21): its active
 * ed25519 key without the RSA companion, whose private key is gone too.
 */
export async function dropRsaCompanion(store: StorePort, domainId: string): Promise<void> {
  if (store instanceof LmdbStore) return lmdbDropRsaCompanion(store, domainId);
  if (store instanceof PostgresStore) return pgDropRsaCompanion(store, domainId);
  return noFixture('dropRsaCompanion', store);
}

/**
 * A broadcast record as postrider 0.1 left it in a stopped daemon's data folder (opened with
 * support/store.ts's engine): not in the channel's broadcast index, and the folder not marked as
 * indexed, so the next start's data upgrade must index it. The store must be closed meanwhile.
 */
export async function putBroadcastAsOlderVersion(dataDir: string, record: { id: string } & Record<string, unknown>): Promise<void> {
  // A switch over the one engine name: a second engine adds its case (or says it has no older versions).
  switch (TEST_STORE_ENGINE) {
    case 'lmdb':
      return lmdbPutBroadcastAsOlderVersion(dataDir, record);
    default:
      return pgPutBroadcastAsOlderVersion(dataDir, record);
  }
}
