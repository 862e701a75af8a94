/**
 * Store verbs for the web dashboard's sessions. As with API keys only the SHA-256 of the token
 * is stored: the token is 256 random bits, so a fast hash suffices and a copy of the data folder
 * holds no usable session. A session names the account-level key it was opened with; the
 * service (sessions/service.ts) ends it when that key is revoked or deleted.
 */
import { hashToken as hashOf, mayBeSessionToken, newSessionToken } from '../../domain/secret-tokens.js';
import type { Principal } from '../../domain/types.js';
import type { DashboardSession } from '../port/accounts.js';
import { findLiveApiKey } from './api-keys.js';
import { dbsOf } from './databases.js';
import type { Store } from './env.js';

export type { DashboardSession } from '../port/accounts.js';

/** A new session for `key`; returns the token (given to the browser as the cookie, never stored). */
export async function createDashboardSession(store: Store, key: Pick<Principal, 'keyId' | 'accountId'>, nowMs: number, lifetimeMs: number): Promise<{ token: string; session: DashboardSession }> {
  const token = newSessionToken();
  const session: DashboardSession = { keyId: key.keyId, accountId: key.accountId, createdAtMs: nowMs, lastSeenAtMs: nowMs, expiresAtMs: nowMs + lifetimeMs };
  await store.write(() => dbsOf(store).dashboardSessions.put(hashOf(token), session));
  return { token, session };
}

/** The session of a presented token (expired or not: the service judges), or undefined. */
export function findDashboardSession(store: Store, token: string): { id: string; session: DashboardSession } | undefined {
  if (!mayBeSessionToken(token)) return undefined;
  const id = hashOf(token);
  const session = dbsOf(store).dashboardSessions.get(id) as DashboardSession | undefined;
  return session ? { id, session } : undefined;
}

export async function touchDashboardSession(store: Store, id: string, nowMs: number): Promise<void> {
  await store.write(() => {
    const s = dbsOf(store).dashboardSessions.get(id) as DashboardSession | undefined;
    if (s) dbsOf(store).dashboardSessions.put(id, { ...s, lastSeenAtMs: Math.max(s.lastSeenAtMs, nowMs) });
  });
}

export async function removeDashboardSession(store: Store, id: string): Promise<void> {
  await store.write(() => dbsOf(store).dashboardSessions.remove(id));
}

/** When a session is over: past either expiry, or its key revoked or gone. */
export interface SessionEnd {
  nowMs: number;
  /** A session unused for this long is over. */
  idleMs: number;
}

function isOver(store: Store, s: DashboardSession, end: SessionEnd): boolean {
  return end.nowMs >= s.expiresAtMs || end.nowMs >= s.lastSeenAtMs + end.idleMs || !findLiveApiKey(store, s.keyId);
}

/**
 * Removes the sessions that are over, in one write; the number removed. Sessions are few (one
 * per browser login), so a full scan is cheap; it runs before the write, so a login with nothing
 * to remove waits for no commit, and each session is judged again inside the write.
 */
export async function sweepDashboardSessions(store: Store, end: SessionEnd): Promise<number> {
  const over = (id: string): boolean => {
    const s = dbsOf(store).dashboardSessions.get(id) as DashboardSession | undefined;
    return s !== undefined && isOver(store, s, end);
  };
  const gone = [...dbsOf(store).dashboardSessions.getRange({})].filter((e) => isOver(store, e.value as DashboardSession, end)).map((e) => e.key as string);
  if (gone.length === 0) return 0;
  return store.write(() => {
    const now = gone.filter(over);
    for (const id of now) dbsOf(store).dashboardSessions.remove(id);
    return now.length;
  });
}
