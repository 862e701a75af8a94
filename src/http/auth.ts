/**
 * Bearer authentication (RFC 6750) and the access rules of spec section 5: a bad credential is
 * 401; a credential of another account, or a channel key used on another channel, is 403
 * (channels/service.ts channelFor for the channels a request names). The account-key rule for
 * writes is domain/access.ts requireAccountKey, applied by the resource services.
 */
import { principalOfToken } from '../api-keys/service.js';
import { AppError } from '../domain/errors.js';
import type { Principal } from '../domain/types.js';
import type { Store } from '../store/env.js';

export function authenticate(store: Store, header: string | undefined): Principal {
  const m = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  if (!m) throw new AppError('unauthorized', 'Send the API key as "Authorization: Bearer <API_KEY>"', { headers: { 'www-authenticate': 'Bearer' } });
  const principal = principalOfToken(store, m[1]);
  if (!principal) throw new AppError('unauthorized', 'The API key is not valid', { headers: { 'www-authenticate': 'Bearer error="invalid_token"' } });
  return principal;
}
