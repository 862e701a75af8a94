/**
 * Who submits over SMTP (RFC 6409 with AUTH, RFC 4954): the user name names the channel (its
 * id, or "api" with a channel-level key), the password is an API key. The SMTP adapter keeps
 * the resulting Submitter with the session and hands it to every later verb.
 */
import type { Channel, Principal } from '../domain/types.js';
import { findApiKeyByToken } from '../store/api-keys.js';
import { getChannel } from '../store/channels.js';
import type { Store } from '../store/env.js';

export interface Submitter {
  principal: Principal;
  channel: Channel;
}

/** The Submitter these credentials name, or null when they do not name one (one answer for every reason). */
export function authenticateSubmitter(store: Store, username: string, password: string): Submitter | null {
  const key = findApiKeyByToken(store, password);
  if (!key) return null;
  const name = username.trim().toLowerCase();
  const channelId = key.channelId ?? (name === 'api' ? null : name);
  if (!channelId || (key.channelId && name !== 'api' && name !== key.channelId)) return null;
  const channel = getChannel(store, channelId);
  if (!channel || channel.accountId !== key.accountId) return null;
  return { principal: { keyId: key.id, accountId: key.accountId, channelId: key.channelId }, channel };
}
