/**
 * The PostgreSQL engine's channels (store/port/channels.ts ChannelsPort): reads in
 * channels-read.ts, writes (create under the limit, update, delete) in channels-write.ts, the
 * purge of a deleted channel in channel-purge-batch.ts and its checks in channel-purge-remains.ts.
 */
import type { PgContext } from '../context.js';
import type { ChannelsPort } from '../../port/channels.js';
import { broadcastRemains, channelRemains } from '../channel-purge-remains.js';
import { purgeChannelBatch } from '../channel-purge-batch.js';
import { deletedAmong, getChannelRecord, getLiveChannel, listChannels, pendingPurges } from '../channels-read.js';
import { isChannelDeleted } from '../channels-tx.js';
import { createChannel, deleteChannel, updateChannel } from '../channels-write.js';

export function pgChannels(ctx: PgContext): ChannelsPort {
  return {
    create: (input) => createChannel(ctx, input),
    get: (id) => getLiveChannel(ctx, id),
    getRecord: (id) => getChannelRecord(ctx, id),
    list: (filter) => listChannels(ctx, filter),
    update: (id, patch) => updateChannel(ctx, id, patch),
    delete: (id) => deleteChannel(ctx, id),
    isDeleted: (id) => isChannelDeleted(ctx.sql, id),
    deletedAmong: (ids) => deletedAmong(ctx, ids),
    pendingPurges: () => pendingPurges(ctx),
    purgeBatch: (channelId, max) => purgeChannelBatch(ctx, channelId, max),
    remains: (channelId) => channelRemains(ctx, channelId),
    broadcastRemains: (broadcastId, channelId) => broadcastRemains(ctx, broadcastId, channelId),
  };
}
