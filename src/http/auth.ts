/**
 * Bearer authentication (RFC 6750) and the access rules of spec section 5: a bad credential is
 * 401; a credential of another account, or a channel key used on another channel, is 403.
 */
import { AppError } from '../domain/errors.js';
import type { ApiKey, Channel, Principal } from '../domain/types.js';
import { findApiKeyByToken } from '../store/api-keys.js';
import { getChannelRecord } from '../store/channels.js';
import type { Store } from '../store/env.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(s: string): boolean {
  return UUID.test(s);
}

export function authenticate(store: Store, header: string | undefined): Principal {
  const m = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  if (!m) throw new AppError('unauthorized', 'Send the API key as "Authorization: Bearer <API_KEY>"', { headers: { 'www-authenticate': 'Bearer' } });
  const key: ApiKey | undefined = findApiKeyByToken(store, m[1]);
  if (!key) throw new AppError('unauthorized', 'The API key is not valid', { headers: { 'www-authenticate': 'Bearer error="invalid_token"' } });
  return { keyId: key.id, accountId: key.accountId, channelId: key.channelId };
}

export function requireAccountKey(p: Principal): void {
  if (p.channelId) throw new AppError('forbidden', 'This operation needs an account-level API key');
}

/**
 * The channel a request names, if the principal may act on it.
 * Unknown (or malformed) id: 404 channel_not_found; another account's or another channel's: 403.
 */
export function channelFor(store: Store, p: Principal, id: string): Channel {
  const c = isUuid(id) ? getChannelRecord(store, id.toLowerCase()) : undefined;
  if (!c) throw new AppError('channel_not_found', `Channel ${id} does not exist`);
  if (c.accountId !== p.accountId || (p.channelId && p.channelId !== c.id)) {
    throw new AppError('forbidden', 'The API key may not access this channel');
  }
  if (c.deletedAt) throw new AppError('channel_not_found', `Channel ${id} does not exist`);
  return c;
}
