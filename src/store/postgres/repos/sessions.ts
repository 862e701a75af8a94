/**
 * The PostgreSQL engine's dashboard sessions (store/port/accounts.ts DashboardSessionsPort),
 * under the SHA-256 of their token (domain/secret-tokens.ts): the token is never stored.
 */
import { hashToken, mayBeSessionToken, newSessionToken } from '../../../domain/secret-tokens.js';
import type { PgContext } from '../context.js';
import type { DashboardSession, DashboardSessionsPort } from '../../port/accounts.js';

interface Row {
  key_id: string;
  account_id: string;
  created_at_ms: number;
  last_seen_at_ms: number;
  expires_at_ms: number;
}

function sessionOf(r: Row): DashboardSession {
  return { keyId: r.key_id, accountId: r.account_id, createdAtMs: r.created_at_ms, lastSeenAtMs: r.last_seen_at_ms, expiresAtMs: r.expires_at_ms };
}

export function pgSessions(ctx: PgContext): DashboardSessionsPort {
  const { sql } = ctx;
  return {
    async create(input): Promise<{ token: string; session: DashboardSession }> {
      const token = newSessionToken();
      const session: DashboardSession = {
        keyId: input.keyId,
        accountId: input.accountId,
        createdAtMs: input.nowMs,
        lastSeenAtMs: input.nowMs,
        expiresAtMs: input.nowMs + input.lifetimeMs,
      };
      await sql`
        INSERT INTO dashboard_sessions (id, key_id, account_id, created_at_ms, last_seen_at_ms, expires_at_ms)
        VALUES (${hashToken(token)}, ${session.keyId}, ${session.accountId}, ${session.createdAtMs}, ${session.lastSeenAtMs}, ${session.expiresAtMs})`;
      return { token, session };
    },

    async findByToken(token: string): Promise<{ id: string; session: DashboardSession } | undefined> {
      if (!mayBeSessionToken(token)) return undefined;
      const id = hashToken(token);
      const [row] = await sql<Row[]>`
        SELECT key_id, account_id, created_at_ms, last_seen_at_ms, expires_at_ms FROM dashboard_sessions WHERE id = ${id}`;
      return row ? { id, session: sessionOf(row) } : undefined;
    },

    /** Forward only (GREATEST), in one UPDATE: racing touches keep the latest. */
    async touch(id: string, nowMs: number): Promise<void> {
      await sql`UPDATE dashboard_sessions SET last_seen_at_ms = GREATEST(last_seen_at_ms, ${nowMs}) WHERE id = ${id}`;
    },

    async remove(id: string): Promise<void> {
      await sql`DELETE FROM dashboard_sessions WHERE id = ${id}`;
    },

    /**
     * One DELETE with a NOT EXISTS on the live key (the port's rule). Racing sweeps remove each
     * session once: a DELETE that waited for another's row lock finds the row gone and skips
     * it. Sessions are few (one per browser login): a scan of the table is cheap.
     */
    async sweep(input: { nowMs: number; idleMs: number }): Promise<number> {
      const rows = await sql`
        DELETE FROM dashboard_sessions s
        WHERE s.expires_at_ms <= ${input.nowMs}
           OR s.last_seen_at_ms + ${input.idleMs}::int8 <= ${input.nowMs}
           OR NOT EXISTS (SELECT 1 FROM api_keys k WHERE k.id = s.key_id AND k.revoked_at_ms IS NULL)
        RETURNING s.id`;
      return rows.length;
    },
  };
}
