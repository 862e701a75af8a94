/**
 * The web dashboard's sessions (docs/dashboard.md). The browser never holds the API key: it
 * trades an account-level key for a session once (POST /dashboard/session) and then sends the
 * session cookie, which the HTTP adapter turns into exactly the principal of that key.
 *
 * A session ends at the first of: SESSION_ABSOLUTE_MS after login, SESSION_IDLE_MS without a
 * request, logout, or its key being revoked or removed (the key is looked up on every use).
 * Ended sessions are removed when met and, in bulk, at each login.
 */
import { AppError } from '../domain/errors.js';
import type { Principal } from '../domain/types.js';
import { principalOfToken } from '../api-keys/service.js';
import type { DashboardSession } from '../store/port/accounts.js';
import type { StorePort } from '../store/port/index.js';

/** A session lasts at most 12 hours, whatever its use (a working day). */
export const SESSION_ABSOLUTE_MS = 12 * 3_600_000;
/** ...and ends after 1 hour without a request. */
export const SESSION_IDLE_MS = 3_600_000;
/** The last-use time is written at most this often, so reads do not turn into writes. */
const TOUCH_EVERY_MS = 60_000;

export interface SessionInfo {
  accountId: string;
  keyId: string;
  /** The absolute end. */
  expiresAt: string;
  /** The end if no request comes before it. */
  idleExpiresAt: string;
}

function infoOf(s: DashboardSession): SessionInfo {
  return {
    accountId: s.accountId,
    keyId: s.keyId,
    expiresAt: new Date(s.expiresAtMs).toISOString(),
    idleExpiresAt: new Date(Math.min(s.expiresAtMs, s.lastSeenAtMs + SESSION_IDLE_MS)).toISOString(),
  };
}

/** Over: past either expiry, or its key revoked or gone (the key is read on every use). */
async function ended(store: StorePort, s: DashboardSession, nowMs: number): Promise<boolean> {
  if (nowMs >= s.expiresAtMs || nowMs >= s.lastSeenAtMs + SESSION_IDLE_MS) return true;
  const key = await store.apiKeys.get(s.keyId);
  return key === undefined || Boolean(key.revokedAt);
}

/**
 * Opens a session for a presented API key: unknown or revoked is 401 unauthorized, a channel key
 * 403 account_key_required (the dashboard acts on the whole account). Returns the cookie token.
 */
export async function openSession(store: StorePort, apiKey: string, nowMs = Date.now()): Promise<{ token: string; info: SessionInfo }> {
  // The one check of a presented key (api-keys/service.ts), as for the API and SMTP AUTH.
  const key = await principalOfToken(store, apiKey);
  if (!key) throw new AppError('unauthorized', 'The API key is not valid');
  if (key.channelId !== null) {
    throw new AppError('account_key_required', 'This is a channel key; the dashboard needs an account-level key (postrider keys create --account <id>)');
  }
  await store.sessions.sweep({ nowMs, idleMs: SESSION_IDLE_MS });
  const { token, session } = await store.sessions.create({ keyId: key.keyId, accountId: key.accountId, nowMs, lifetimeMs: SESSION_ABSOLUTE_MS });
  return { token, info: infoOf(session) };
}

/** The live session of a token, refreshing its last use; removes it and answers undefined once over. */
async function liveSession(store: StorePort, token: string, nowMs: number): Promise<DashboardSession | undefined> {
  const found = await store.sessions.findByToken(token);
  if (!found) return undefined;
  if (await ended(store, found.session, nowMs)) {
    void store.sessions.remove(found.id).catch(() => undefined);
    return undefined;
  }
  // Not awaited: the request does not wait for a write; a lost refresh only ends the session earlier.
  if (nowMs - found.session.lastSeenAtMs >= TOUCH_EVERY_MS) void store.sessions.touch(found.id, nowMs).catch(() => undefined);
  return found.session;
}

/** The principal a session cookie stands for: that of its key. 401 session_expired when it is over or unknown. */
export async function principalOfSession(store: StorePort, token: string, nowMs = Date.now()): Promise<Principal> {
  const s = await liveSession(store, token, nowMs);
  if (!s) throw new AppError('session_expired', 'The dashboard session has ended (expired, signed out, or its API key revoked); sign in again', { headers: { 'www-authenticate': 'Bearer' } });
  return { keyId: s.keyId, accountId: s.accountId, channelId: null };
}

/** The session's times, or null without a live one (the dashboard's "am I signed in"). */
export async function sessionInfo(store: StorePort, token: string | undefined, nowMs = Date.now()): Promise<SessionInfo | null> {
  const s = token ? await liveSession(store, token, nowMs) : undefined;
  return s ? infoOf(s) : null;
}

/** Logout: removes the session (nothing to do for an unknown token). */
export async function closeSession(store: StorePort, token: string | undefined): Promise<void> {
  const found = token ? await store.sessions.findByToken(token) : undefined;
  if (found) await store.sessions.remove(found.id);
}
