/** The LMDB engine's LmdbChannels: the port's verbs over the functions of store/lmdb/. */
import type { Channel } from '../../../domain/types.js';
import type { Store } from '../env.js';
import type { ChannelsPort } from '../../port/index.js';
import type { BroadcastRemains, ChannelFilter, ChannelPatch, ChannelRemains, NewChannel, PurgeBatch, StoredChannel } from '../../port/channels.js';
import { createChannel, deleteChannel, listChannels, updateChannel } from '../channels.js';
import { deletedAmong, getChannel, getChannelRecord, isChannelDeleted } from '../channel-records.js';
import { purgeChannelBatch } from '../channel-purge.js';
import { pendingPurges } from '../purge-queue.js';
import { broadcastRemains, channelRemains } from '../remains.js';

export class LmdbChannels implements ChannelsPort {
  constructor(private readonly store: Store) {}

  /** The limit is counted inside the write (createChannel): LMDB's one writer makes it atomic. */
  create(input: NewChannel): Promise<Channel> {
    return createChannel(this.store, input);
  }

  async get(id: string): Promise<Channel | undefined> {
    return getChannel(this.store, id);
  }

  async getRecord(id: string): Promise<StoredChannel | undefined> {
    return getChannelRecord(this.store, id);
  }

  async list(filter: ChannelFilter): Promise<{ results: Channel[]; totalCount: number }> {
    return listChannels(this.store, filter);
  }

  update(id: string, patch: ChannelPatch): Promise<Channel | undefined> {
    return updateChannel(this.store, id, patch);
  }

  delete(id: string): Promise<boolean> {
    return deleteChannel(this.store, id);
  }

  async isDeleted(id: string): Promise<boolean> {
    return isChannelDeleted(this.store, id);
  }

  /** One synchronous pass: no write can commit between two of its reads. */
  async deletedAmong(ids: Iterable<string>): Promise<ReadonlySet<string>> {
    return deletedAmong(this.store, ids);
  }

  async pendingPurges(): Promise<string[]> {
    return pendingPurges(this.store);
  }

  purgeBatch(channelId: string, max: number): Promise<PurgeBatch> {
    return purgeChannelBatch(this.store, channelId, max);
  }

  async remains(channelId: string): Promise<ChannelRemains> {
    return channelRemains(this.store, channelId);
  }

  async broadcastRemains(broadcastId: string, channelId: string): Promise<BroadcastRemains> {
    return broadcastRemains(this.store, broadcastId, channelId);
  }
}
