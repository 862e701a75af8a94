/**
 * Bearer authentication (RFC 6750) and the access rules of spec section 5: a bad credential is
 * 401; a credential of another account, or a channel key used on another channel, is 403
 * (channels/service.ts accessibleChannel for the channels a request names). The account-key rule for
 * writes is domain/access.ts requireAccountKey, applied by the resource services.
 *
 * The web dashboard's session cookie (sessions/service.ts) stands in for the bearer key, as
 * exactly the principal of the key the session was opened with, but only on requests that also
 * carry `X-Postrider-Dashboard: 1`: a cross-site form or image cannot set a custom header
 * (Fetch standard: a non-safelisted header makes a cross-origin request preflighted, and we
 * answer no CORS), so a forged request never gets the cookie's authority, on top of
 * SameSite=Strict (RFC 6265bis 5.4.7).
 */
import { principalOfToken } from '../api-keys/service.js';
import { AppError } from '../domain/errors.js';
import type { Principal } from '../domain/types.js';
import { principalOfSession } from '../sessions/service.js';
import type { StorePort } from '../store/port/index.js';

export const SESSION_COOKIE = 'postrider_session';
/** The header a dashboard request carries with the cookie (lower case, as Node gives headers). */
export const DASHBOARD_HEADER = 'x-postrider-dashboard';

export interface AuthHeaders {
  authorization?: string;
  cookie?: string;
  [DASHBOARD_HEADER]?: string | string[];
}

/** The value of the session cookie in a Cookie header (RFC 6265 5.4), or undefined. */
export function sessionCookie(cookieHeader: string | undefined): string | undefined {
  if (!cookieHeader) return undefined;
  for (const part of cookieHeader.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === SESSION_COOKIE) return part.slice(eq + 1).trim() || undefined;
  }
  return undefined;
}

/** True when the request says it comes from the dashboard's own scripts. */
export function fromDashboard(headers: AuthHeaders): boolean {
  return headers[DASHBOARD_HEADER] === '1';
}

export async function authenticate(store: StorePort, headers: AuthHeaders): Promise<Principal> {
  const header = headers.authorization;
  const session = header === undefined ? sessionCookie(headers.cookie) : undefined;
  if (session !== undefined) {
    if (!fromDashboard(headers)) {
      throw new AppError('unauthorized', 'The dashboard session cookie is accepted only with the header X-Postrider-Dashboard: 1; API clients send "Authorization: Bearer <API_KEY>"', {
        headers: { 'www-authenticate': 'Bearer' },
      });
    }
    return principalOfSession(store, session);
  }
  const m = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  if (!m) throw new AppError('unauthorized', 'Send the API key as "Authorization: Bearer <API_KEY>"', { headers: { 'www-authenticate': 'Bearer' } });
  const principal = await principalOfToken(store, m[1]);
  if (!principal) throw new AppError('unauthorized', 'The API key is not valid', { headers: { 'www-authenticate': 'Bearer error="invalid_token"' } });
  return principal;
}

/**
 * authenticate for a GET an iframe makes (routes/dashboard-message-html.ts,
 * dashboard-template-html.ts), or a form the dashboard posts into one
 * (dashboard-template-draft-html.ts): neither can carry X-Postrider-Dashboard, so there the
 * session cookie alone stands for its key, on a request that changes nothing, unless the browser marks the request as not same-origin (Fetch
 * Metadata, W3C: the dashboard's own frame is same-origin); SameSite=Strict keeps the cookie off
 * other sites' requests as well. An API key works as on the API.
 */
export async function authenticateFrame(store: StorePort, headers: AuthHeaders & { 'sec-fetch-site'?: string }): Promise<Principal> {
  if (headers.authorization !== undefined) return authenticate(store, headers);
  const site = headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin') throw new AppError('forbidden', 'This view is shown only inside the dashboard');
  const token = sessionCookie(headers.cookie);
  if (!token) throw new AppError('unauthorized', 'Sign in to the dashboard, or send "Authorization: Bearer <API_KEY>"', { headers: { 'www-authenticate': 'Bearer' } });
  return principalOfSession(store, token);
}
