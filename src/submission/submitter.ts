/**
 * Who submits over SMTP (RFC 6409 with AUTH, RFC 4954): the user name names the channel (its
 * id, or "api" with a channel-level key), the password is an API key. The SMTP adapter keeps
 * the resulting Submitter with the session and hands it to every later verb.
 */
import { principalOfToken } from '../api-keys/service.js';
import type { Channel, Principal } from '../domain/types.js';
import type { StorePort } from '../store/port/index.js';

export interface Submitter {
  principal: Principal;
  channel: Channel;
}

/**
 * Why valid credentials name no channel: the key itself was verified, only the user name does not
 * fit it. Said to the client (issue 30) because the key's holder already knows what kind of key it
 * is; nothing is said when the key is unknown or revoked (RFC 4954 6: 535 5.7.8 either way).
 */
export type UserNameMismatch =
  /** An account-level key with user "api": such a key names no channel. */
  | 'account-key-needs-channel-id'
  /** A channel key with another channel's id (or another name) as the user. */
  | 'channel-key-other-channel'
  /** An account-level key with a user name that is no channel of the key's account. */
  | 'no-such-channel';

export type SubmitterResult = Submitter | { mismatch: UserNameMismatch } | null;

/**
 * The Submitter these credentials name; null when the password is no valid key (one answer for
 * every reason), or the mismatch when the key is valid but the user name does not fit it.
 */
export async function authenticateSubmitter(store: StorePort, username: string, password: string): Promise<SubmitterResult> {
  const principal = await principalOfToken(store, password);
  if (!principal) return null;
  const name = username.trim().toLowerCase();
  if (principal.channelId) {
    if (name !== 'api' && name !== principal.channelId) return { mismatch: 'channel-key-other-channel' };
  } else if (name === 'api') {
    return { mismatch: 'account-key-needs-channel-id' };
  }
  const channel = await store.channels.get(principal.channelId ?? name);
  if (!channel || channel.accountId !== principal.accountId) return { mismatch: 'no-such-channel' };
  return { principal, channel };
}
