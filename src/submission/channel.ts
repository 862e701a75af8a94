/**
 * Which channel a send goes through (spec section 5): a channel key's own channel, or the
 * X-Service-Channel-Id header with an account-level key.
 */
import { AppError } from '../domain/errors.js';
import type { Channel, Principal } from '../domain/types.js';
import { getChannelRecord } from '../store/lmdb/channels.js';
import type { LmdbStore } from '../store/lmdb/engine.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function resolveSendChannel(store: LmdbStore, p: Principal, header: string | undefined): Channel {
  const named = header?.trim() || undefined;
  if (p.channelId && named && named.toLowerCase() !== p.channelId) {
    throw new AppError('forbidden', 'This API key belongs to another channel than X-Service-Channel-Id names');
  }
  const id = p.channelId ?? named;
  if (!id) throw new AppError('invalid_channel', 'An account-level API key must name the channel in the X-Service-Channel-Id header');
  const c = UUID.test(id) ? getChannelRecord(store, id.toLowerCase()) : undefined;
  if (!c || c.deletedAt) throw new AppError('channel_not_found', `Channel ${id} does not exist`);
  if (c.accountId !== p.accountId) throw new AppError('forbidden', 'The API key may not use this channel');
  return c;
}
