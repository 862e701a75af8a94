/**
 * The LMDB engine's LmdbBroadcasts: the port's verbs over store/lmdb/broadcasts.ts and
 * broadcast-stats.ts. A batch's progress is not a verb here: it commits with the batch's messages
 * (repos/messages.ts commit, `broadcastProgress`).
 */
import type { Store } from '../env.js';
import type { IdempotencyWrite } from '../../port/idempotency.js';
import type { BroadcastCounters, BroadcastFailure, BroadcastRecord, BroadcastsPort, BroadcastView, CancelResult, Paged } from '../../port/broadcasts.js';
import { broadcastCounters } from '../broadcast-stats.js';
import {
  acceptBroadcast,
  broadcastEntries,
  broadcastFailures,
  broadcastSuppressions,
  cancelBroadcast,
  getBroadcast,
  listChannelBroadcasts,
  nextActiveBroadcast,
} from '../broadcasts.js';

export class LmdbBroadcasts implements BroadcastsPort {
  constructor(private readonly store: Store) {}

  accept<C, E>(input: {
    record: BroadcastRecord<C>;
    entries: E[];
    sendLimit?: { accountId: string; limit: number; recipients: number };
    idempotency?: IdempotencyWrite;
  }): Promise<void> {
    return acceptBroadcast(this.store, input);
  }

  async get<C>(id: string): Promise<BroadcastRecord<C> | undefined> {
    return getBroadcast<C>(this.store, id);
  }

  async view<C>(id: string): Promise<BroadcastView<C> | undefined> {
    // Synchronous reads, one after the other in one turn: no commit lands between them.
    const record = getBroadcast<C>(this.store, id);
    return record && { record, counters: broadcastCounters(this.store, id) };
  }

  async nextActive<C>(): Promise<BroadcastRecord<C> | undefined> {
    return nextActiveBroadcast<C>(this.store);
  }

  async entries<E>(id: string, from: number, count: number): Promise<{ index: number; entry: E }[]> {
    return broadcastEntries<E>(this.store, id, from, count);
  }

  cancel(id: string, now: Date): Promise<CancelResult> {
    return cancelBroadcast(this.store, id, now);
  }

  async failures(id: string, page: { limit: number; offset: number }): Promise<Paged<BroadcastFailure>> {
    return broadcastFailures(this.store, id, page);
  }

  async suppressions(id: string, page: { limit: number; offset: number }): Promise<Paged<string>> {
    return broadcastSuppressions(this.store, id, page);
  }

  async counters(id: string): Promise<BroadcastCounters> {
    return broadcastCounters(this.store, id);
  }

  async listOfChannel<C>(q: { channelId: string; limit: number; offset: number; match: (b: BroadcastView<C>) => boolean }): Promise<Paged<BroadcastView<C>>> {
    return listChannelBroadcasts<C>(this.store, q);
  }
}
