/**
 * Store verbs for channels. A deleted channel leaves a tombstone (name, deliveryType,
 * deletedAt) so domains that were linked to it can still show it as `deleted: true`
 * (spec 2.2). Keys, suppressions, domain links and webhooks go in the delete transaction; the
 * channel's messages, events and counters are scheduled for the background purge
 * (store/channel-purge.ts) in that same transaction.
 */
import { randomUUID } from 'node:crypto';
import { AppError } from '../../domain/errors.js';
import type { Channel } from '../../domain/types.js';
import type { ChannelFilter, ChannelPatch, NewChannel } from '../port/channels.js';
import { removeChannelKeysInTxn } from './api-keys.js';
import { dbsOf } from './databases.js';
import { schedulePurgeInTxn } from './purge-queue.js';
import { getChannel, type StoredChannel } from './channel-records.js';
import { unlinkChannelFromDomainsInTxn } from './domains.js';
import { removeChannelSuppressionsInTxn } from './suppressions.js';
import { removeChannelWebhooksInTxn } from './webhooks.js';
import { removeChannelRoutesInTxn } from './inbound-routes.js';
import { unlinkChannelFromTemplatesInTxn } from './templates.js';
import type { Store } from './env.js';
import { KEY_MAX } from './layout.js';

export { getChannel, getChannelRecord, type StoredChannel } from './channel-records.js';
export type { ChannelFilter } from '../port/channels.js';

function indexKey(c: Channel): [string, number, string] {
  return [c.accountId, Date.parse(c.createdAt), c.id];
}

function countInTxn(store: Store, accountId: string): number {
  return dbsOf(store).accountChannels.getKeysCount({ start: [accountId], end: [accountId, KEY_MAX] });
}

export async function createChannel(store: Store, input: NewChannel): Promise<Channel> {
  const now = new Date().toISOString();
  const channel: Channel = {
    id: randomUUID(),
    accountId: input.accountId,
    name: input.name,
    deliveryType: input.deliveryType,
    tracking: { ...input.tracking },
    ...(input.ipPool !== undefined ? { ipPool: input.ipPool } : {}),
    createdAt: now,
    updatedAt: now,
  };
  // The limit is checked inside the write transaction so concurrent creates cannot overshoot it.
  await store.write(() => {
    if (countInTxn(store, input.accountId) >= input.maxPerAccount) {
      throw new AppError('resource_limit_exceeded', `An account may have at most ${input.maxPerAccount} channels`);
    }
    dbsOf(store).channels.put(channel.id, channel);
    dbsOf(store).accountChannels.put(indexKey(channel), 1);
  });
  return channel;
}

export function listChannels(store: Store, f: ChannelFilter): { results: Channel[]; totalCount: number } {
  const needle = f.name?.toLowerCase();
  const ids = f.ids ? new Set(f.ids) : null;
  const matches: Channel[] = [];
  for (const { key } of dbsOf(store).accountChannels.getRange({ start: [f.accountId], end: [f.accountId, KEY_MAX] })) {
    const id = (key as [string, number, string])[2];
    if (ids && !ids.has(id)) continue;
    const c = getChannel(store, id);
    if (!c) continue;
    if (needle && !c.name.toLowerCase().includes(needle)) continue;
    if (f.deliveryType && c.deliveryType !== f.deliveryType) continue;
    matches.push(c);
  }
  return { results: matches.slice(f.offset, f.offset + f.limit), totalCount: matches.length };
}

export async function updateChannel(store: Store, id: string, patch: ChannelPatch): Promise<Channel | undefined> {
  return store.write(() => {
    const c = getChannel(store, id);
    if (!c) return undefined;
    const { ipPool, ...kept } = c;
    const pool = patch.ipPool === undefined ? ipPool : (patch.ipPool ?? undefined);
    const next: Channel = {
      ...kept,
      ...(pool !== undefined ? { ipPool: pool } : {}),
      name: patch.name ?? c.name,
      deliveryType: patch.deliveryType ?? c.deliveryType,
      tracking: { ...c.tracking, ...patch.tracking },
      updatedAt: new Date().toISOString(),
    };
    dbsOf(store).channels.put(id, next);
    return next;
  });
}

/**
 * Deletes a channel and everything tied to it. Other areas register their own cleanup in
 * CHANNEL_CLEANUPS so this stays the one place that knows a channel is going away.
 */
export async function deleteChannel(store: Store, id: string): Promise<boolean> {
  return store.write(() => {
    const c = getChannel(store, id);
    if (!c) return false;
    dbsOf(store).accountChannels.remove(indexKey(c));
    const deletedAt = new Date().toISOString();
    const tombstone: StoredChannel = { ...c, updatedAt: deletedAt, deletedAt };
    dbsOf(store).channels.put(id, tombstone);
    for (const cleanup of CHANNEL_CLEANUPS) cleanup(store, id);
    // Messages, events and counters can be many: they go in the background (channel-purge.ts).
    schedulePurgeInTxn(store, { channelId: id, accountId: c.accountId, deletedAt });
    return true;
  });
}

/** Runs inside the delete transaction; each area of the store adds its own function here. */
const CHANNEL_CLEANUPS: ReadonlyArray<(store: Store, channelId: string) => void> = [
  removeChannelKeysInTxn,
  removeChannelSuppressionsInTxn,
  unlinkChannelFromDomainsInTxn,
  removeChannelWebhooksInTxn,
  removeChannelRoutesInTxn,
  unlinkChannelFromTemplatesInTxn,
];
