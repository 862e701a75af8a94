/**
 * IdempotencyPort.sweep over PostgreSQL: up to `max` records expired before nowMs (LMDB's range
 * ends before nowMs), oldest first, and the claims whose lease ended (left by nodes that died).
 * SKIP LOCKED: two nodes sweeping at once take different rows.
 */
import type { PgContext } from './context.js';

export async function sweepIdempotency(ctx: PgContext, nowMs: number, max: number): Promise<number> {
  const [row] = await ctx.begin(
    (tx) => tx<{ n: number }[]>`
      WITH d AS (
        DELETE FROM idempotency_records r USING (
          SELECT account_id, key FROM idempotency_records WHERE expires_at_ms < ${nowMs}
          ORDER BY expires_at_ms LIMIT ${max} FOR UPDATE SKIP LOCKED
        ) x
        WHERE r.account_id = x.account_id AND r.key = x.key
        RETURNING 1
      ),
      c AS (
        DELETE FROM idempotency_claims c USING (
          SELECT account_id, key FROM idempotency_claims WHERE until_ms < ${nowMs}
          ORDER BY until_ms LIMIT ${max} FOR UPDATE SKIP LOCKED
        ) x
        WHERE c.account_id = x.account_id AND c.key = x.key AND c.until_ms < ${nowMs}
      )
      SELECT count(*)::int8 AS n FROM d`,
  );
  return row.n;
}
