/**
 * Broadcasts: accepted entries, expansion progress, cancellation, failures and counters.
 *
 * The accepted request is stored (record + one row per entry) before the API answers; the
 * expander then commits the entries as messages in batches, each with the broadcast's progress
 * (MessagesPort.commit `broadcastProgress`), so a crash resumes exactly after the last committed
 * batch. Every entry ends as a message, as a failure row, or, after a cancel, as never expanded.
 *
 * Part of the store port (store/port/index.ts): asynchronous verbs that take and return plain
 * data; what must commit together is one verb. Implemented by the LMDB engine in
 * store/lmdb/repos/ and checked by the contract suite in test/store-contract/.
 */
import type { AddressValue } from '../../domain/types.js';
import type { StatCounters } from '../../domain/wire.js';
import type { IdempotencyWrite } from './idempotency.js';

export interface BroadcastRecord<Common = unknown> {
  id: string;
  accountId: string;
  channelId: string;
  createdAt: string;
  /** Expansion: 'done' once no entry is left to expand (all expanded, or canceled). */
  state: 'expanding' | 'done';
  total: number;
  /** Entries [0, cursor) have been turned into messages or failure rows. */
  cursor: number;
  /** Messages created, less those whose composition failed for good after the commit (then failure rows). */
  messages: number;
  /** Entries whose recipients were all suppressed (failure rows with recipients_suppressed). */
  skipped: number;
  /** Entries whose message could not be built, before or after its commit (failure rows with the error). */
  failed?: number;
  /** Distinct recipients left out because suppressed (suppression rows). */
  suppressed?: number;
  /**
   * A scheduled broadcast (issue 34): ISO 8601 UTC; every message expanded from it carries it as
   * its own scheduledAt, so its jobs are due then (or at their commit, once the time has passed).
   */
  scheduledAt?: string;
  canceledAt?: string;
  /** Entries never expanded because of the cancel. */
  canceledEntries?: number;
  common: Common;
}

/** One entry that became no message. */
export interface BroadcastFailure {
  index: number;
  to: AddressValue[];
  cc: AddressValue[];
  bcc: AddressValue[];
  code: string;
  message: string;
}

/** Kept as messages finish, so that reading a broadcast never scans its messages or events. */
export interface BroadcastCounters {
  /** Messages of the broadcast no longer queued (sent, bounced, expired, dropped or canceled). */
  finished: number;
  /** Messages taken out of the queue by a cancel before any delivery attempt. */
  canceled: number;
  statistics: StatCounters;
}

/**
 * One expansion batch, committed with its messages (MessagesPort.commit): the broadcast's cursor
 * moves from `from` to `cursor`, and the entries that became no message are recorded. The
 * messages committed with it are the batch's messages (the engine counts them, and those already
 * finished: sandbox messages are sent at once).
 */
export interface BroadcastProgress {
  broadcastId: string;
  /** The cursor this batch starts at: the broadcast's cursor must still be there. */
  from: number;
  cursor: number;
  skipped: number;
  failures: BroadcastFailure[];
  /** Recipients left out because suppressed (duplicates across batches are counted once). */
  suppressed: string[];
}

/** Thrown by a commit whose broadcast was canceled (or its channel deleted) meanwhile: nothing of it was written. */
export class BroadcastCanceled extends Error {
  constructor(readonly broadcastId: string) {
    super(`broadcast ${broadcastId} was canceled`);
    this.name = 'BroadcastCanceled';
  }
}

export type CancelResult = { status: 'canceled'; record: BroadcastRecord } | { status: 'completed' | 'not_found' };

/** A broadcast with its counters, as a list returns it (a predicate decides from both). */
export interface BroadcastView<Common = unknown> {
  record: BroadcastRecord<Common>;
  counters: BroadcastCounters;
}

export interface Paged<T> {
  totalCount: number;
  results: T[];
}

export interface BroadcastsPort {
  /**
   * Stores an accepted broadcast (record, entries, its channel's index) in one write, with the
   * pending account's quota taken for `sendLimit.recipients` (conditional update: throws
   * send_limit_exceeded, writing nothing) and the idempotency record (throws conflict when the
   * key holds another live record). Resolves once durable.
   */
  accept<C, E>(input: {
    record: BroadcastRecord<C>;
    entries: E[];
    sendLimit?: { accountId: string; limit: number; recipients: number };
    idempotency?: IdempotencyWrite;
  }): Promise<void>;

  get<C>(id: string): Promise<BroadcastRecord<C> | undefined>;

  /** The record and its counters read together (one snapshot: the status derived from both is one the broadcast had). */
  view<C>(id: string): Promise<BroadcastView<C> | undefined>;

  /** The oldest broadcast still being expanded whose channel is not deleted. */
  nextActive<C>(): Promise<BroadcastRecord<C> | undefined>;

  /** Up to `count` entries not yet expanded, from index `from` on. */
  entries<E>(id: string, from: number, count: number): Promise<{ index: number; entry: E }[]>;

  /**
   * Cancels in one write: entries not yet expanded are deleted; each message none of whose jobs
   * was leased or attempted (a scheduled one whose time has not come too) is canceled as
   * SchedulePort.cancelMessage does it: jobs done with canceledAt, the record with canceledAt and
   * out of the queue, one `canceled` event for its recipients. Idempotent on a canceled
   * broadcast; a completed one answers `completed` and is left as it is.
   */
  cancel(id: string, now: Date): Promise<CancelResult>;

  /** Its failure rows, in entry order. */
  failures(id: string, page: { limit: number; offset: number }): Promise<Paged<BroadcastFailure>>;
  /** The recipients left out because suppressed, in address order. */
  suppressions(id: string, page: { limit: number; offset: number }): Promise<Paged<string>>;

  counters(id: string): Promise<BroadcastCounters>;

  /**
   * A page of a channel's broadcasts, newest first, among those `match` accepts (a pure,
   * synchronous predicate: port rules); totalCount counts every match.
   */
  listOfChannel<C>(q: { channelId: string; limit: number; offset: number; match: (b: BroadcastView<C>) => boolean }): Promise<Paged<BroadcastView<C>>>;
}

/**
 * True once every entry is expanded and every message made has left the queue. Records written
 * before messages were counted per broadcast (no `failed` field) are completed once expanded.
 */
export function broadcastCompleted(b: BroadcastRecord, counters: Pick<BroadcastCounters, 'finished'>): boolean {
  if (b.state !== 'done' || b.canceledAt) return false;
  return b.failed === undefined || counters.finished >= b.messages;
}
