/**
 * Who submits over SMTP (RFC 6409 with AUTH, RFC 4954): the user name names the channel (its
 * id, or "api" with a channel-level key), the password is an API key. The SMTP adapter keeps
 * the resulting Submitter with the session and hands it to every later verb.
 */
import { principalOfToken } from '../api-keys/service.js';
import type { Channel, Principal } from '../domain/types.js';
import { getChannel } from '../store/channels.js';
import type { Store } from '../store/env.js';

export interface Submitter {
  principal: Principal;
  channel: Channel;
}

/** The Submitter these credentials name, or null when they do not name one (one answer for every reason). */
export function authenticateSubmitter(store: Store, username: string, password: string): Submitter | null {
  const principal = principalOfToken(store, password);
  if (!principal) return null;
  const name = username.trim().toLowerCase();
  const channelId = principal.channelId ?? (name === 'api' ? null : name);
  if (!channelId || (principal.channelId && name !== 'api' && name !== principal.channelId)) return null;
  const channel = getChannel(store, channelId);
  if (!channel || channel.accountId !== principal.accountId) return null;
  return { principal, channel };
}
