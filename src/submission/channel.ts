/**
 * Which channel a send goes through (spec section 5): a channel key's own channel, or the
 * X-Service-Channel-Id header with an account-level key.
 */
import { AppError } from '../domain/errors.js';
import type { Channel, Principal } from '../domain/types.js';
import type { StoredChannel } from '../store/port/channels.js';
import type { StorePort } from '../store/port/index.js';
import type { SenderHeaders } from './sender-headers.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The channel of this send, or the AppError that refuses it (403, 404 channel_not_found, 422 invalid_channel). */
export async function sendChannel(store: Pick<StorePort, 'channels'>, req: Pick<SenderHeaders, 'principal' | 'channelHeader' | 'channelHeaderName'>): Promise<Channel> {
  const id = namedChannelId(req);
  return usableChannel(UUID.test(id) ? await store.channels.getRecord(id.toLowerCase()) : undefined, req.principal, id);
}

/** The channel id the key and header name, before any read: the header may not contradict a channel key. */
function namedChannelId(req: Pick<SenderHeaders, 'principal' | 'channelHeader' | 'channelHeaderName'>): string {
  const p = req.principal;
  const named = req.channelHeader?.trim() || undefined;
  if (p.channelId && named && named.toLowerCase() !== p.channelId) {
    // The header as the client sent it (X-Helo-Channel-Id from the SDKs), not its canonical name.
    throw new AppError('forbidden', `This API key belongs to another channel than ${req.channelHeaderName ?? 'X-Service-Channel-Id'} names`);
  }
  const id = p.channelId ?? named;
  if (!id) throw new AppError('invalid_channel', 'An account-level API key must name the channel in the X-Service-Channel-Id header');
  return id;
}

/** The record read for `id`, if it is a live channel of the key's account. */
function usableChannel(c: StoredChannel | undefined, p: Principal, id: string): Channel {
  if (!c || c.deletedAt) throw new AppError('channel_not_found', `Channel ${id} does not exist`);
  if (c.accountId !== p.accountId) throw new AppError('forbidden', 'The API key may not use this channel');
  return c;
}
