/**
 * Channels, their deletion tombstones and the purge of a deleted channel's data.
 *
 * Part of the store port (store/port/index.ts): asynchronous verbs that take and return plain
 * data; what must commit together is one verb. Implemented by the LMDB engine in
 * store/lmdb/repos/ and checked by the contract suite in test/store-contract/.
 *
 * A deleted channel leaves a tombstone (its record with `deletedAt`) that stays after the purge,
 * so domains that were linked to it still list it as `deleted: true` (spec 2.2). From the commit
 * of `delete` on, nothing more is done on the channel's behalf: readers ask `isDeleted` (or
 * `deletedAmong` for many records at once) before delivering, expanding, finishing or posting.
 */
import type { Channel, DeliveryType, Tracking } from '../../domain/types.js';

/** A channel as stored: live, or a tombstone (deletedAt set) of a deleted one. */
export interface StoredChannel extends Channel {
  deletedAt?: string;
}

export interface ChannelFilter {
  accountId: string;
  /** Restricts to these ids (channel keys see only their own channel). */
  ids?: string[];
  /** Partial, case-insensitive match on the name. */
  name?: string;
  deliveryType?: DeliveryType;
  limit: number;
  offset: number;
}

export interface NewChannel {
  accountId: string;
  name: string;
  deliveryType: DeliveryType;
  tracking: Tracking;
  /** Issue 35: a pool of delivery.pools, checked by the service; absent when not asked for. */
  ipPool?: string;
  /** config.limits.channelsPerAccount: the account's live channels may not exceed it. */
  maxPerAccount: number;
}

export interface ChannelPatch {
  name?: string;
  deliveryType?: DeliveryType;
  tracking?: Partial<Tracking>;
  /** A pool replaces the channel's; null removes it; undefined keeps it. */
  ipPool?: string | null;
}

/** One purge batch: how much work it did, and whether the channel's purge is over. */
export interface PurgeBatch {
  removed: number;
  done: boolean;
}

/** What the store still holds of a deleted channel (ChannelsPort.remains). */
export interface ChannelRemains {
  messages: number;
  bodies: number;
  jobs: number;
  events: number;
  /** Counter rows of the channel in the daily and quarter-hour statistics, tags included. */
  stats: number;
  /** Entries of the channel's own activity index. */
  indexEntries: number;
  /** Received messages of the channel's inbound routes (issue 33), raw bytes with them. */
  inboundMessages: number;
  /** The channel's rows of the received-per-day counts. */
  inboundCounts: number;
}

/** What the store still holds of a broadcast of a deleted channel (ChannelsPort.broadcastRemains). */
export interface BroadcastRemains {
  /** Entries, failures, suppressions and message list rows, and the channel's broadcast index entries. */
  rows: number;
  record: boolean;
  counters: boolean;
  statistics: boolean;
}

export interface ChannelsPort {
  /**
   * A new live channel (fresh id, createdAt = updatedAt = now). Refuses with AppError
   * resource_limit_exceeded when the account has `maxPerAccount` live channels already: counted
   * and inserted atomically (LMDB: inside the one write; SQL: the account's row locked, or a
   * conditional counter update, in the insert's transaction), so concurrent creations never
   * exceed the limit.
   */
  create(input: NewChannel): Promise<Channel>;
  /** The live channel with this id; undefined for an unknown or deleted one. */
  get(id: string): Promise<Channel | undefined>;
  /** The channel's record, live or deleted (a tombstone has `deletedAt`), or undefined. */
  getRecord(id: string): Promise<StoredChannel | undefined>;
  /** The account's live channels matching the filter, oldest first (createdAt, then id), one page and the total. */
  list(filter: ChannelFilter): Promise<{ results: Channel[]; totalCount: number }>;
  /**
   * The live channel with the patch applied (updatedAt now), or undefined when it does not exist
   * or was deleted. One conditional update (SQL: UPDATE ... WHERE id AND deleted_at IS NULL).
   */
  update(id: string, patch: ChannelPatch): Promise<Channel | undefined>;
  /**
   * Deletes a live channel in one commit: its tombstone, its API keys, suppressions, domain links
   * (the domains list it as deleted) and webhooks, and the pending purge of its messages, events,
   * broadcasts and counters (purgeBatch). False when it does not exist or is deleted already: of
   * concurrent deletes of one channel exactly one gets true.
   */
  delete(id: string): Promise<boolean>;
  /**
   * Whether the channel is deleted (its tombstone is committed). One key read; false for an
   * unknown id (nothing of it can exist).
   */
  isDeleted(id: string): Promise<boolean>;
  /**
   * Which of `ids` name deleted channels, read at one moment: the snapshot a pass over many
   * records (a lease, a claim, a page) checks each record against. Duplicates are allowed.
   */
  deletedAmong(ids: Iterable<string>): Promise<ReadonlySet<string>>;
  /** The deleted channels whose data is still being purged, in id order. */
  pendingPurges(): Promise<string[]>;
  /**
   * One bounded step of a deleted channel's purge (at most about `max` removals, one commit),
   * resuming where the previous one stopped, also after a restart. `done`: nothing is left (an
   * unknown or finished channel is done at once, removing nothing).
   */
  purgeBatch(channelId: string, max: number): Promise<PurgeBatch>;
  /**
   * What the store still holds of the channel's messages, events and counters: a full scan, for
   * checks (tests, operators) of the purge, never for a request.
   */
  remains(channelId: string): Promise<ChannelRemains>;
  /** As remains, for one broadcast of the channel: a full scan, never for a request. */
  broadcastRemains(broadcastId: string, channelId: string): Promise<BroadcastRemains>;
}
